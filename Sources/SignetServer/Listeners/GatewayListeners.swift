// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
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
        server = Self.makeServer(
            tls: try tls?.channelConfiguration(clientCertificates: configuration.tls?.clientCertificates == true),
            proxyProtocol: trustedProxies?.source == .proxyProtocol ? trustedProxies : nil
        )
        let adminTLS = try configuration.adminListener?.tls.map { try GatewayTLS.resolve($0) }
        self.adminTLS = adminTLS
        adminServer = try configuration.adminListener.map { _ in
            Self.makeServer(
                tls: try adminTLS?.channelConfiguration(clientCertificates: configuration.adminListenerAsksForCertificates),
                proxyProtocol: nil
            )
        }
    }

    /// HTTP/1.1 (``http1``), over TLS when configured, after a PROXY protocol header when the
    /// trusted proxies send one (read before the TLS handshake, where balancers put it).
    static func makeServer(tls: TLSChannelConfiguration?, proxyProtocol: TrustedProxies?) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            let http = HTTP1Channel(responder: responder, configuration: http1)
            switch (tls, proxyProtocol) {
            case (nil, nil): return http
            case (let tls?, nil): return try TLSChannel(http, configuration: tls)
            case (nil, let proxies?): return ProxyProtocolChannel(http, trusted: proxies)
            case (let tls?, let proxies?): return ProxyProtocolChannel(try TLSChannel(http, configuration: tls), trusted: proxies)
            }
        }
    }

    /// HTTP/1.1 with parser refusals answered as problem+json (``ParserErrorResponder``); a
    /// connection that sends nothing for 60 s while a request is read, or between requests, is
    /// closed (nginx's `client_header_timeout` / `client_body_timeout`).
    static var http1: HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(additionalChannelHandlers: [ParserErrorResponder()], idleTimeout: .seconds(60))
    }
}
