// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle
import SignetMiddleware

/// HTTP/1.1 to the one upstream, over kept-alive connections: the request target goes out as the
/// bytes the proxy wrote (``UpstreamOrigin/requestTarget(routedTarget:)``), which no general HTTP
/// client promises (AsyncHTTPClient re-encodes it through Foundation's `URL`).
///
/// Idle connections are kept a few seconds (fewer than Node's default keep-alive of 5 s, so the
/// gateway closes first) and at most ``maximumIdle`` of them; at most ``maximumConnections`` are open
/// at once, so clients that stop reading their answers cannot pin an unbounded number (each is
/// released after ``UpstreamExchangeHandler/stalledReader`` anyway). A request that meets a
/// kept-alive connection the upstream had just closed is sent once more on a new one when its method
/// is idempotent (RFC 9110 §9.2.2), as nginx does; otherwise it fails.
final class UpstreamClient: Sendable {
    let origin: UpstreamOrigin
    /// `Host` for every request: the origin's authority, written once.
    let authority: String
    let maximumIdle: Int
    let maximumConnections: Int
    let keepAlive: TimeAmount
    private let group: any EventLoopGroup
    private let tls: NIOSSLContext?
    private let pool = NIOLockedValueBox(Pool())

    private struct Pool {
        var idle: [IdleConnection] = []
        /// Connections open or being opened.
        var open = 0
    }

    private struct IdleConnection {
        var channel: any Channel
        var handler: NIOLoopBound<UpstreamExchangeHandler>
        var since: NIODeadline
    }

    init(
        origin: UpstreamOrigin,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        maximumIdle: Int = 128,
        maximumConnections: Int = 1024,
        keepAlive: TimeAmount = .seconds(4)
    ) throws {
        self.origin = origin
        self.authority = origin.authority
        self.group = group
        self.maximumIdle = maximumIdle
        self.maximumConnections = maximumConnections
        self.keepAlive = keepAlive
        tls = origin.scheme == .https ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
    }

    /// Sends one request and returns as soon as the response head arrives; the body follows.
    ///
    /// - Parameters:
    ///   - timeout: For connecting, for the response head, and between two parts of the body.
    /// - Throws: ``UpstreamFailure``.
    func execute(_ request: HTTPRequest, body: ByteBuffer?, timeout: TimeAmount) async throws -> UpstreamResponse {
        if let reused = takeIdle() {
            do {
                return try await exchange(on: reused, request: request, body: body, timeout: timeout)
            } catch UpstreamFailure.closedBeforeAnswer where Self.isIdempotent(request.method) {
                // The upstream closed a kept-alive connection as the request went out: once more, new.
            }
        }
        let connection = try await connect(timeout: timeout)
        return try await exchange(on: connection, request: request, body: body, timeout: timeout)
    }

    /// Whether the upstream accepts a new connection now (one kept alive says nothing of the
    /// listener); the connection is closed at once.
    ///
    /// - Throws: ``UpstreamFailure``.
    func probe(timeout: TimeAmount) async throws {
        let (channel, _) = try await connect(timeout: timeout)
        try? await channel.close()
    }

    /// Closes the idle connections; those in use close when their exchange ends.
    func closeIdle() {
        let connections = pool.withLockedValue { pool in
            defer { pool.idle.removeAll() }
            return pool.idle
        }
        for connection in connections { connection.channel.close(promise: nil) }
    }

    private func exchange(
        on connection: (any Channel, NIOLoopBound<UpstreamExchangeHandler>),
        request: HTTPRequest,
        body: ByteBuffer?,
        timeout: TimeAmount
    ) async throws -> UpstreamResponse {
        let (channel, handler) = connection
        let promise = channel.eventLoop.makePromise(of: UpstreamResponse.self)
        channel.eventLoop.execute {
            handler.value.start(request: request, body: body, timeout: timeout, promise: promise) { [self] reusable in
                if reusable { release(channel: channel, handler: handler) }
            }
        }
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// The most recently used idle connection that is still open and not past ``keepAlive``; older
    /// ones are closed on the way (no timer per connection: they are found here, or closed by the
    /// upstream first).
    private func takeIdle(on loop: (any EventLoop)? = nil) -> (any Channel, NIOLoopBound<UpstreamExchangeHandler>)? {
        let now = NIODeadline.now()
        while let connection = pool.withLockedValue({ pool in
            guard let loop else { return pool.idle.popLast() }
            return pool.idle.lastIndex { $0.channel.eventLoop === loop }.map { pool.idle.remove(at: $0) }
        }) {
            guard connection.channel.isActive else { continue }
            guard now - connection.since < keepAlive else {
                connection.channel.close(promise: nil)
                continue
            }
            return (connection.channel, connection.handler)
        }
        return nil
    }

    private func release(channel: any Channel, handler: NIOLoopBound<UpstreamExchangeHandler>) {
        let now = NIODeadline.now()
        let keepAlive = self.keepAlive
        let kept = pool.withLockedValue { pool in
            // The least recently used are the first to have outlived the keep-alive.
            pool.idle.removeAll { connection in
                guard now - connection.since >= keepAlive else { return false }
                connection.channel.close(promise: nil)
                return true
            }
            guard pool.idle.count < maximumIdle else { return false }
            pool.idle.append(IdleConnection(channel: channel, handler: handler, since: now))
            return true
        }
        if !kept { channel.close(promise: nil) }
    }

    private func connect(timeout: TimeAmount) async throws -> (any Channel, NIOLoopBound<UpstreamExchangeHandler>) {
        try await connect(on: group, timeout: timeout).get()
    }

    /// A new connection, counted against ``maximumConnections``, on a loop of `group`.
    ///
    /// - Throws: ``UpstreamFailure``.
    private func connect(on group: any EventLoopGroup, timeout: TimeAmount) -> EventLoopFuture<(any Channel, NIOLoopBound<UpstreamExchangeHandler>)> {
        let admitted = pool.withLockedValue { pool in
            guard pool.open < maximumConnections else { return false }
            pool.open += 1
            return true
        }
        guard admitted else { return group.next().makeFailedFuture(UpstreamFailure.saturated) }
        return open(on: group, timeout: timeout).flatMapErrorThrowing { [pool] error in
            pool.withLockedValue { $0.open -= 1 }
            throw error
        }
    }

    private func open(on group: any EventLoopGroup, timeout: TimeAmount) -> EventLoopFuture<(any Channel, NIOLoopBound<UpstreamExchangeHandler>)> {
        let tls = self.tls
        let host = origin.host
        let serverName = IPAddress(host) == nil ? host : nil
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        try pipeline.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    try pipeline.addHTTPClientHandlers(leftOverBytesStrategy: .fireError)
                    try pipeline.addHandler(UpstreamExchangeHandler())
                }
            }
        return bootstrap.connect(host: host, port: origin.port)
            .flatMapErrorThrowing { error in
                if case ChannelError.connectTimeout = error { throw UpstreamFailure.timedOut }
                throw UpstreamFailure.unreachable
            }
            .flatMapThrowing { [pool] channel in
                let handler = NIOLoopBound(try channel.pipeline.syncOperations.handler(type: UpstreamExchangeHandler.self), eventLoop: channel.eventLoop)
                channel.closeFuture.whenComplete { _ in
                    let id = ObjectIdentifier(channel)
                    pool.withLockedValue { pool in
                        pool.open -= 1
                        pool.idle.removeAll { ObjectIdentifier($0.channel) == id }
                    }
                }
                return (channel, handler)
            }
    }

    /// Sends one request from the event-loop data plane on a connection of `loop` — a kept-alive
    /// one of that loop, or a new one — and relays the answer to `sink` on that loop, without a
    /// task or a hop to another thread. A kept-alive connection the upstream had just closed is
    /// replaced once for an idempotent method, as in ``execute(_:body:timeout:)``.
    ///
    /// Call on `loop`.
    func relay(_ request: HTTPRequest, body: ByteBuffer?, timeout: TimeAmount, on loop: any EventLoop, to sink: any UpstreamSink) {
        if let reused = takeIdle(on: loop) {
            let retry = Self.isIdempotent(request.method)
                ? RetryOnNewConnection(client: self, request: request, body: body, timeout: timeout, loop: loop, sink: sink) : nil
            return start(on: reused, request: request, body: body, timeout: timeout, sink: retry ?? sink)
        }
        connectAndStart(on: loop, request: request, body: body, timeout: timeout, sink: sink)
    }

    private func connectAndStart(on loop: any EventLoop, request: HTTPRequest, body: ByteBuffer?, timeout: TimeAmount, sink: any UpstreamSink) {
        let bound = NIOLoopBound(sink, eventLoop: loop)
        connect(on: loop, timeout: timeout).hop(to: loop).whenComplete { [self] result in
            switch result {
            case .success(let connection): start(on: connection, request: request, body: body, timeout: timeout, sink: bound.value)
            case .failure(let error): bound.value.upstreamFailed(error as? UpstreamFailure ?? .unreachable)
            }
        }
    }

    private func start(
        on connection: (any Channel, NIOLoopBound<UpstreamExchangeHandler>),
        request: HTTPRequest,
        body: ByteBuffer?,
        timeout: TimeAmount,
        sink: any UpstreamSink
    ) {
        let (channel, handler) = connection
        // The client went away while the connection was made: nothing goes upstream for it.
        guard !sink.abandoned else { return release(channel: channel, handler: handler) }
        sink.upstreamConnected(handler.value)
        handler.value.start(request: request, body: body, timeout: timeout, sink: sink) { [self] reusable in
            if reusable { release(channel: channel, handler: handler) }
        }
    }

    /// Stands between a reused connection and the sink: a connection that closed before any
    /// answer is replaced by a new one, once; anything else goes to the sink.
    private final class RetryOnNewConnection: UpstreamSink {
        let client: UpstreamClient
        let request: HTTPRequest
        let body: ByteBuffer?
        let timeout: TimeAmount
        let loop: any EventLoop
        let sink: any UpstreamSink

        init(client: UpstreamClient, request: HTTPRequest, body: ByteBuffer?, timeout: TimeAmount, loop: any EventLoop, sink: any UpstreamSink) {
            self.client = client
            self.request = request
            self.body = body
            self.timeout = timeout
            self.loop = loop
            self.sink = sink
        }

        var abandoned: Bool { sink.abandoned }
        func upstreamConnected(_ exchange: UpstreamExchangeHandler) { sink.upstreamConnected(exchange) }
        func upstreamHead(_ head: HTTPResponse) { sink.upstreamHead(head) }
        func upstreamBody(_ part: ByteBuffer) { sink.upstreamBody(part) }
        func upstreamEnd() { sink.upstreamEnd() }
        func upstreamReadComplete() { sink.upstreamReadComplete() }

        func upstreamFailed(_ failure: UpstreamFailure) {
            guard failure == .closedBeforeAnswer else { return sink.upstreamFailed(failure) }
            client.connectAndStart(on: loop, request: request, body: body, timeout: timeout, sink: sink)
        }
    }

    static func isIdempotent(_ method: HTTPRequest.Method) -> Bool {
        [.get, .head, .options, .put, .delete, .trace].contains(method)
    }

}

extension UpstreamClient: Service {
    /// Closes the idle connections when the gateway shuts down.
    func run() async throws {
        try? await gracefulShutdown()
        closeIdle()
    }
}
