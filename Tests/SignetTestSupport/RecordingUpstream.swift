// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOHTTP1
import SignetServer
import Synchronization

/// An upstream for router tests: records every request the gateway forwards (head, fields, body)
/// and answers what the test scripted — `200` with an empty body by default — without a socket.
package final class RecordingUpstream: UpstreamTransport {
    /// One forwarded request, as the upstream would have received it.
    package struct Received: Sendable {
        package var method: HTTPMethod
        package var target: String
        package var fields: HTTPHeaders
        package var body: [UInt8]
    }

    /// An answer to give.
    package enum Answer: Sendable {
        case respond(status: HTTPResponseStatus, fields: [(String, String)], body: [UInt8])
        case fail(UpstreamFailure)
    }

    package let origin: UpstreamOrigin
    package var authority: String { origin.authority }
    private let state = Mutex<(received: [Received], script: [Answer], fallback: Answer)>(
        ([], [], .respond(status: .ok, fields: [], body: []))
    )

    package init(origin: String = "http://upstream.test:8080") throws {
        self.origin = try UpstreamOrigin(parsing: origin)
    }

    /// Every request forwarded so far, in order.
    package var received: [Received] { state.withLock { $0.received } }

    /// The next requests get these answers, one each; then `fallback`.
    package func answer(_ answers: Answer...) {
        state.withLock { $0.script += answers }
    }

    /// What every request gets once the script is spent.
    package func answerEveryRequest(_ answer: Answer) {
        state.withLock { $0.fallback = answer }
    }

    package func execute(_ head: HTTPRequestHead, body: ByteBuffer?, timeout: TimeAmount) async throws -> UpstreamResponse {
        let received = Received(
            method: head.method,
            target: head.uri,
            fields: head.headers,
            body: body.map { Array($0.readableBytesView) } ?? []
        )
        let answer = state.withLock { state -> Answer in
            state.received.append(received)
            return state.script.isEmpty ? state.fallback : state.script.removeFirst()
        }
        switch answer {
        case .fail(let failure):
            throw failure
        case .respond(let status, let fields, let body):
            var headers = HTTPHeaders(fields)
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
            return UpstreamResponse(head: HTTPResponseHead(version: .http1_1, status: status, headers: headers), body: ByteBuffer(bytes: body))
        }
    }

    package func probe(timeout: TimeAmount) async throws {}
    package func closeIdle() {}
    package func run() async throws {}
}
