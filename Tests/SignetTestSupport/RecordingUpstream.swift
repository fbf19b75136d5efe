// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import ServiceLifecycle
import SignetServer
import Synchronization

/// An upstream for router tests: records every request the gateway forwards (method, target,
/// authority, fields, body) and answers what the test scripted — `200` with an empty body by
/// default — without a socket.
package final class RecordingUpstream: UpstreamTransport {
    /// One forwarded request, as the upstream would have received it.
    package struct Received: Sendable {
        package var method: HTTPRequest.Method
        /// The request target's bytes.
        package var target: String
        /// What `Host` says.
        package var authority: String?
        package var fields: Fields
        package var body: [UInt8]

        /// The fields, read by name as a test writes it (`fields["Signet-Key-Id"]`).
        package struct Fields: Sendable {
            package var all: HTTPFields

            /// Every value of the field `name`, in order; none for a name that is not a field name.
            package subscript(_ name: String) -> [String] {
                HTTPField.Name(name).map { all[values: $0] } ?? []
            }
        }
    }

    /// An answer to give.
    package enum Answer: Sendable {
        case respond(status: HTTPResponse.Status, fields: [(String, String)], body: [UInt8])
        case fail(UpstreamFailure)
        /// What `answer` says: another application's answer, in a router harness.
        case relay(@Sendable (HTTPRequest, ByteBuffer?) async throws -> UpstreamResponse)
    }

    package let origin: UpstreamOrigin
    package var authority: String { origin.authority }
    private let state = Mutex<(received: [Received], script: [Answer], fallback: Answer, probe: UpstreamFailure?)>(
        ([], [], .respond(status: .ok, fields: [], body: []), nil)
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

    package func execute(_ request: HTTPRequest, body: ByteBuffer?, timeout: TimeAmount) async throws -> UpstreamResponse {
        let received = Received(
            method: request.method,
            target: request.path ?? "",
            authority: request.authority,
            fields: .init(all: request.headerFields),
            body: body.map { Array($0.readableBytesView) } ?? []
        )
        let answer = state.withLock { state -> Answer in
            state.received.append(received)
            return state.script.isEmpty ? state.fallback : state.script.removeFirst()
        }
        switch answer {
        case .fail(let failure):
            throw failure
        case .relay(let answer):
            return try await answer(request, body)
        case .respond(let status, let fields, let body):
            var headers = HTTPFields()
            for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
            headers[.contentLength] = String(body.count)
            return UpstreamResponse(head: HTTPResponse(status: status, headerFields: headers), body: ByteBuffer(bytes: body))
        }
    }

    /// What readiness probes get from now on: `failure`, or success when `nil`.
    package func answerProbes(_ failure: UpstreamFailure?) {
        state.withLock { $0.probe = failure }
    }

    package func probe(timeout: TimeAmount) async throws {
        if let failure = state.withLock({ $0.probe }) { throw failure }
    }
    package func closeIdle() {}
    /// Runs until the gateway shuts down, as the real upstream client does: a service that
    /// returned at once would end its service group, and with it the gateway's other services.
    package func run() async throws {
        try? await gracefulShutdown()
    }
}
