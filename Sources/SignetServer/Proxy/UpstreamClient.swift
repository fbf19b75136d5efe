// SPDX-License-Identifier: Apache-2.0
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// HTTP/1.1 to the one upstream, over kept-alive connections: the request target goes out as the
/// bytes the proxy wrote (``UpstreamOrigin/requestTarget(routedTarget:)``), which no general HTTP
/// client promises (AsyncHTTPClient re-encodes it through Foundation's `URL`).
///
/// Idle connections are kept a few seconds (fewer than Node's default keep-alive of 5 s, so the
/// gateway closes first) and at most ``maximumIdle`` of them. A request that meets a kept-alive
/// connection the upstream had just closed is sent once more on a new one when its method is
/// idempotent (RFC 9110 §9.2.2), as nginx does; otherwise it fails.
final class UpstreamClient: Sendable {
    let origin: UpstreamOrigin
    let maximumIdle: Int
    let keepAlive: TimeAmount
    private let group: any EventLoopGroup
    private let tls: NIOSSLContext?
    private let idle = NIOLockedValueBox<[IdleConnection]>([])

    private struct IdleConnection {
        var channel: any Channel
        var handler: NIOLoopBound<UpstreamExchangeHandler>
        var expiry: Scheduled<Void>
    }

    init(
        origin: UpstreamOrigin,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        maximumIdle: Int = 128,
        keepAlive: TimeAmount = .seconds(4)
    ) throws {
        self.origin = origin
        self.group = group
        self.maximumIdle = maximumIdle
        self.keepAlive = keepAlive
        tls = origin.scheme == .https ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
    }

    /// Sends one request and returns as soon as the response head arrives; the body follows.
    ///
    /// - Parameters:
    ///   - timeout: For connecting, for the response head, and between two parts of the body.
    /// - Throws: ``UpstreamFailure``.
    func execute(_ head: HTTPRequestHead, body: ByteBuffer?, timeout: TimeAmount) async throws -> UpstreamResponse {
        if let reused = takeIdle() {
            do {
                return try await exchange(on: reused, head: head, body: body, timeout: timeout)
            } catch UpstreamFailure.closedBeforeAnswer where Self.isIdempotent(head.method) {
                // The upstream closed a kept-alive connection as the request went out: once more, new.
            }
        }
        let connection = try await connect(timeout: timeout)
        return try await exchange(on: connection, head: head, body: body, timeout: timeout)
    }

    /// Whether the upstream accepts a connection now: an idle kept-alive one counts, else a new one
    /// is opened and kept for the next request.
    ///
    /// - Throws: ``UpstreamFailure/unreachable``.
    func probe(timeout: TimeAmount) async throws {
        if let idle = takeIdle() {
            release(channel: idle.0, handler: idle.1)
            return
        }
        let (channel, handler) = try await connect(timeout: timeout)
        release(channel: channel, handler: handler)
    }

    /// Closes the idle connections; those in use close when their exchange ends.
    func closeIdle() {
        let connections = idle.withLockedValue { idle in
            defer { idle.removeAll() }
            return idle
        }
        for connection in connections {
            connection.expiry.cancel()
            connection.channel.close(promise: nil)
        }
    }

    private func exchange(
        on connection: (any Channel, NIOLoopBound<UpstreamExchangeHandler>),
        head: HTTPRequestHead,
        body: ByteBuffer?,
        timeout: TimeAmount
    ) async throws -> UpstreamResponse {
        let (channel, handler) = connection
        let promise = channel.eventLoop.makePromise(of: UpstreamResponse.self)
        channel.eventLoop.execute {
            handler.value.start(head: head, body: body, timeout: timeout, promise: promise) { [self] reusable in
                if reusable { release(channel: channel, handler: handler) }
            }
        }
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    private func takeIdle() -> (any Channel, NIOLoopBound<UpstreamExchangeHandler>)? {
        while let connection = idle.withLockedValue({ $0.popLast() }) {
            connection.expiry.cancel()
            if connection.channel.isActive { return (connection.channel, connection.handler) }
        }
        return nil
    }

    private func release(channel: any Channel, handler: NIOLoopBound<UpstreamExchangeHandler>) {
        let keepAlive = self.keepAlive
        let id = ObjectIdentifier(channel)
        let expiry = channel.eventLoop.scheduleTask(in: keepAlive) { [idle] in
            let expired = idle.withLockedValue { idle in
                guard let index = idle.firstIndex(where: { ObjectIdentifier($0.channel) == id }) else { return false }
                idle.remove(at: index)
                return true
            }
            if expired { channel.close(promise: nil) }
        }
        let kept = idle.withLockedValue { idle in
            guard idle.count < maximumIdle else { return false }
            idle.append(IdleConnection(channel: channel, handler: handler, expiry: expiry))
            return true
        }
        if !kept {
            expiry.cancel()
            channel.close(promise: nil)
        }
    }

    private func connect(timeout: TimeAmount) async throws -> (any Channel, NIOLoopBound<UpstreamExchangeHandler>) {
        let tls = self.tls
        let host = origin.host
        let serverName = Self.isIPAddress(host) ? nil : host
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
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: origin.port).get()
        } catch {
            throw UpstreamFailure.unreachable
        }
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: UpstreamExchangeHandler.self), eventLoop: channel.eventLoop)
        }.get()
        channel.closeFuture.whenComplete { [idle] _ in
            let id = ObjectIdentifier(channel)
            idle.withLockedValue { $0.removeAll { ObjectIdentifier($0.channel) == id } }
        }
        return (channel, handler)
    }

    static func isIdempotent(_ method: HTTPMethod) -> Bool {
        [.GET, .HEAD, .OPTIONS, .PUT, .DELETE, .TRACE].contains(method)
    }

    private static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
    }
}

extension UpstreamClient: Service {
    /// Closes the idle connections when the gateway shuts down.
    func run() async throws {
        try? await gracefulShutdown()
        closeIdle()
    }
}
