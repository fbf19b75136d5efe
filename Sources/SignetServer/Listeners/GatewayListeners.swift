// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
import SignetMiddleware

/// The gateway's listeners as served: the apps' listener and, with `adminListener`, the operators',
/// each with its TLS resolved (a development certificate made once) and its HTTP server. A reload
/// keeps them: TLS and addresses change only at a restart (``GatewayReloader``).
struct GatewayListeners: Sendable {
    /// The served certificate when the apps' listener speaks HTTPS.
    let tls: GatewayTLS?
    let server: HTTPServerBuilder
    /// The admin listener's served certificate, and its server when `adminListener` is configured.
    let adminTLS: GatewayTLS?
    let adminServer: HTTPServerBuilder?

    init(_ configuration: GatewayConfiguration, trustedProxies: TrustedProxies?) throws {
        let tls = try configuration.tls.map { try GatewayTLS.resolve($0) }
        self.tls = tls
        let connections = ConnectionLimits(perClient: configuration.maxConnectionsPerClient, trusted: trustedProxies)
        let requestTimeout = TimeAmount.seconds(Int64(configuration.requestTimeoutSeconds))
        server = Self.makeServer(
            tls: try tls?.channelConfiguration(clientCertificates: configuration.tls?.clientCertificates == true),
            proxyProtocol: trustedProxies?.source == .proxyProtocol ? trustedProxies : nil,
            connections: connections,
            requestTimeout: requestTimeout
        )
        let adminTLS = try configuration.adminListener?.tls.map { try GatewayTLS.resolve($0) }
        self.adminTLS = adminTLS
        adminServer = try configuration.adminListener.map { _ in
            Self.makeServer(
                tls: try adminTLS?.channelConfiguration(clientCertificates: configuration.adminListenerAsksForCertificates),
                proxyProtocol: nil,
                connections: ConnectionLimits(perClient: configuration.maxConnectionsPerClient, trusted: nil),
                requestTimeout: requestTimeout
            )
        }
    }

    /// HTTP/1.1 (``http1(requestTimeout:)``), over TLS when configured, after a PROXY protocol
    /// header when the trusted proxies send one (read before the TLS handshake, where balancers put
    /// it), each connection counted against its client's limit before anything else.
    static func makeServer(
        tls: TLSChannelConfiguration?,
        proxyProtocol: TrustedProxies?,
        connections: ConnectionLimits,
        requestTimeout: TimeAmount
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            let http = HTTP1Channel(responder: responder, configuration: http1(requestTimeout: requestTimeout))
            switch (tls, proxyProtocol) {
            case (nil, nil):
                return ConnectionLimitChannel(base: http, limits: connections)
            case (let tls?, nil):
                return ConnectionLimitChannel(base: try TLSChannel(http, configuration: tls), limits: connections)
            case (nil, let proxies?):
                return ConnectionLimitChannel(base: ProxyProtocolChannel(http, trusted: proxies), limits: connections)
            case (let tls?, let proxies?):
                return ConnectionLimitChannel(
                    base: ProxyProtocolChannel(try TLSChannel(http, configuration: tls), trusted: proxies),
                    limits: connections
                )
            }
        }
    }

    /// HTTP/1.1 with parser refusals answered as problem+json (``ParserErrorResponder``), a body
    /// that must arrive within `requestTimeout` of its head (``RequestDeadlineHandler``), a request
    /// abandoned when its client stops sending (``ClientDepartureHandler``); a
    /// connection that sends nothing for 60 s while a request is read, or between requests, is
    /// closed (nginx's `client_header_timeout` / `client_body_timeout`): a head that is not whole
    /// within 60 s of the previous answer closes it, however it trickles.
    static func http1(requestTimeout: TimeAmount) -> HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                ParserErrorResponder(), RequestDeadlineHandler(timeout: requestTimeout), ClientDepartureHandler(),
            ],
            idleTimeout: .seconds(60)
        )
    }
}
