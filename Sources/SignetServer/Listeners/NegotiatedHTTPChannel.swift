// SPDX-License-Identifier: Apache-2.0
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOTLS

/// HTTPS that speaks HTTP/2 or HTTP/1.1, as the client's handshake chose among what ``ServedTLS``
/// offers (ALPN `h2`, `http/1.1`; no ALPN, or a listener offering none, is HTTP/1.1), with the
/// certificate read from ``ServedTLS`` as each connection is accepted, so a reload's renewed
/// certificate is served to new connections (Hummingbird's `TLSChannel` fixes its context once).
///
/// HTTP/2 is Hummingbird's `HTTP2Channel`: each stream runs the same responder, with the same
/// per-request handlers as an HTTP/1.1 connection (body deadline, departure, parser refusals), so a
/// request is routed, verified, limited and forwarded exactly as over HTTP/1.1 — the upstream is
/// spoken to in HTTP/1.1 either way. The limits of a connection are SwiftNIO's HTTP/2 defaults, in
/// force for every connection: 100 concurrent streams, a 16 KiB header list, and the floods of
/// 2023–2024 cut off — at most 200 streams reset by the client (Rapid Reset, CVE-2023-44487) or
/// failed by it in 30 s, 1 empty DATA frame in a row, bounded CONTINUATION sequences, a rate of
/// control frames (PING, SETTINGS…) and a count of protocol glitches, past which the connection
/// ends with GOAWAY. A handshake must be done within the request timeout
/// (``NegotiationDeadlineHandler``), and a connection ends 35 s after the server's GOAWAY
/// (``GoAwayDeadlineHandler``), whether or not its client answers.
struct NegotiatedHTTPChannel: ServerChildChannel {
    enum Negotiated: Sendable {
        case http1(HTTP1Channel.Value)
        case http2(HTTP2Channel.Value)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    struct UnofferedProtocol: Error {}

    let http1: HTTP1Channel
    let http2: HTTP2Channel
    let served: ServedTLS
    /// The event-loop data plane, of HTTP/1.1 connections (``DataPlaneChannel``) and of HTTP/2
    /// streams (``DataPlaneStreamInstaller``).
    let dataPlane: DataPlane?
    /// How long the handshake and the choice of protocol may take.
    let negotiationTimeout: TimeAmount
    /// How long an HTTP/2 connection lives after the server's first GOAWAY (idle, or a shutdown).
    static let goAwayTimeout = TimeAmount.seconds(35)

    init(
        responder: @escaping HTTPChannelHandler.Responder,
        configuration: HTTP1Channel.Configuration,
        idleTimeout: Duration,
        negotiationTimeout: TimeAmount,
        served: ServedTLS,
        dataPlane: DataPlane? = nil
    ) {
        self.dataPlane = dataPlane
        self.negotiationTimeout = negotiationTimeout
        http1 = HTTP1Channel(responder: responder, configuration: configuration)
        var streamConfiguration = configuration
        if let dataPlane {
            let handlers = configuration.additionalChannelHandlers
            streamConfiguration.additionalChannelHandlers = { handlers() + [DataPlaneStreamInstaller(plane: dataPlane)] }
        }
        http2 = HTTP2Channel(
            responder: responder,
            configuration: .init(
                // A connection with no stream open this long is closed (GOAWAY), as an idle HTTP/1.1 one is.
                idleTimeout: idleTimeout,
                // After the second GOAWAY of a shutdown, streams still open get this long.
                gracefulCloseTimeout: .seconds(30),
                streamConfiguration: streamConfiguration
            )
        )
        self.served = served
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let deadline = NegotiationDeadlineHandler(deadline: negotiationTimeout)
            try channel.pipeline.syncOperations.addHandler(deadline)
            try channel.pipeline.syncOperations.addHandler(served.handler())
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result in
                switch result {
                case .negotiated("h2"):
                    return http2.setup(channel: channel, logger: logger).flatMapThrowing { connection in
                        let operations = channel.pipeline.syncOperations
                        try operations.addHandler(
                            GoAwayDeadlineHandler(deadline: Self.goAwayTimeout),
                            position: .after(try operations.handler(type: NIOHTTP2Handler.self))
                        )
                        return .http2(connection)
                    }
                case .negotiated("http/1.1"), .fallback:
                    return http1.setup(channel: channel, logger: logger).flatMapThrowing { [dataPlane] value in
                        if let dataPlane { try DataPlaneChannel.install(dataPlane, in: channel) }
                        return .http1(value)
                    }
                case .negotiated:
                    // Only what the listener offered can be chosen; anything else is a broken peer.
                    return channel.close().flatMapThrowing { throw UnofferedProtocol() }
                }
            }
            try channel.pipeline.syncOperations.addHandler(negotiation)
            // Chosen and set up: the HTTP handlers' own timers take over.
            let bound = NIOLoopBound(deadline, eventLoop: channel.eventLoop)
            negotiation.protocolNegotiationResult.whenSuccess { _ in
                channel.pipeline.syncOperations.removeHandler(bound.value, promise: nil)
            }
            return Value(negotiated: negotiation.protocolNegotiationResult, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        switch try? await value.negotiated.get() {
        case .http1(let connection): await http1.handle(value: connection, logger: logger)
        case .http2(let connection): await http2.handle(value: connection, logger: logger)
        case nil: return  // the handshake failed or the connection closed first
        }
    }
}
