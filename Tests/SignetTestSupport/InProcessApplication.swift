// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import ServiceLifecycle
import Synchronization

/// A Hummingbird application run in this process, as Hummingbird's router test framework
/// (`.router`) runs one: each request goes straight to the application's responder with a context
/// made on a testing channel, no socket opened, while the application's services (sweeps, the
/// reloader, a feature's fetchers) run. Unlike `.router`'s client, a request keeps the authority
/// it was sent to and the client's address (the testing channel's peer), so the gateway sees what
/// it sees over a socket: what clients signed for `@authority`, the source per-client limits and
/// the access log count. ``GatewayHarness`` runs the gateway and the example backend this way.
package final class InProcessApplication: Sendable {
    private let respond: @Sendable (Request, SocketAddress?) async throws -> Response
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(
        respond: @escaping @Sendable (Request, SocketAddress?) async throws -> Response,
        group: ServiceGroup,
        task: Task<Void, any Error>
    ) {
        self.respond = respond
        self.group = group
        self.task = task
    }

    /// Starts `app`'s services; returns once requests can be sent.
    package static func start<App: ApplicationProtocol>(_ app: App) async throws -> InProcessApplication
    where App.Responder.Context.Source == ApplicationRequestContextSource {
        for process in app.processesRunBeforeServerStart { try await process() }
        let responder = try await app.responder
        let logger = app.logger
        let respond: @Sendable (Request, SocketAddress?) async throws -> Response = { request, peer in
            let channel = NIOAsyncTestingChannel()
            channel.remoteAddress = peer
            let context = App.Responder.Context(source: .init(channel: channel, logger: logger))
            do {
                return try await responder.respond(to: request, context: context)
            } catch let error as HTTPError {
                // As Hummingbird's server answers an error thrown past every middleware (its status
                // and fields; the body is Hummingbird's, not the application's).
                return Response(status: error.status, headers: error.headers)
            } catch let error as any HTTPResponseError {
                return Response(status: error.status)
            } catch {
                return Response(status: .internalServerError)
            }
        }
        let group = ServiceGroup(configuration: .init(services: app.services, logger: logger))
        let task = Task { try await group.run() }
        return InProcessApplication(respond: respond, group: group, task: task)
    }

    /// The application's answer to one request, its body read whole.
    ///
    /// - Parameters:
    ///   - authority: What `Host` says.
    ///   - target: The request target (path and query), as sent.
    ///   - peer: The client's address; 127.0.0.1 by default, as on loopback.
    package func execute(
        method: HTTPRequest.Method,
        authority: String,
        target: String,
        fields: HTTPFields,
        body: ByteBuffer?,
        peer: SocketAddress? = try? SocketAddress(ipAddress: "127.0.0.1", port: 50_000)
    ) async throws -> (head: HTTPResponse, body: ByteBuffer) {
        var fields = fields
        if let body { fields[.contentLength] = String(body.readableBytes) }
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: authority, path: target, headerFields: fields),
            body: RequestBody(buffer: body ?? ByteBuffer())
        )
        return try await Self.collect(try await respond(request, peer))
    }

    /// A response with its body read whole, as a socket would have carried it.
    static func collect(_ response: Response) async throws -> (head: HTTPResponse, body: ByteBuffer) {
        let collected = CollectedBody()
        try await response.body.write(CollectingWriter(into: collected))
        return (response.head, collected.bytes.withLock { $0 })
    }

    /// A request whose head is sent now and whose body follows as the test sends it: what a
    /// client that holds its request open does (the gateway judges a request when it is complete).
    ///
    /// - Parameter fields: The head's fields, `Content-Length` among them.
    package func open(
        method: HTTPRequest.Method,
        authority: String,
        target: String,
        fields: HTTPFields,
        peer: SocketAddress? = try? SocketAddress(ipAddress: "127.0.0.1", port: 50_000)
    ) -> HeldRequest {
        let (parts, source) = AsyncStream.makeStream(of: ByteBuffer.self)
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: authority, path: target, headerFields: fields),
            body: RequestBody(asyncSequence: parts)
        )
        let respond = self.respond
        let answer = Task { try await Self.collect(try await respond(request, peer)) }
        return HeldRequest(source: source, answer: answer)
    }

    /// Stops the services and waits until they are down.
    package func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}

/// A request in flight: its body sent part by part, then its answer.
package final class HeldRequest: Sendable {
    private let source: AsyncStream<ByteBuffer>.Continuation
    private let answer: Task<(head: HTTPResponse, body: ByteBuffer), any Error>

    init(source: AsyncStream<ByteBuffer>.Continuation, answer: Task<(head: HTTPResponse, body: ByteBuffer), any Error>) {
        self.source = source
        self.answer = answer
    }

    /// Sends more of the body.
    package func send(_ bytes: [UInt8]) {
        source.yield(ByteBuffer(bytes: bytes))
    }

    /// Ends the body.
    package func end() {
        source.finish()
    }

    /// The answer, once the gateway gives it (before the body ended, when it judged the head).
    package func response() async throws -> (head: HTTPResponse, body: ByteBuffer) {
        try await answer.value
    }
}

/// A response body, as a socket would have carried it.
private final class CollectedBody: Sendable {
    let bytes = Mutex(ByteBuffer())
}

private struct CollectingWriter: ResponseBodyWriter {
    let into: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        _ = into.bytes.withLock { $0.writeImmutableBuffer(buffer) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
