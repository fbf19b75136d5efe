// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
import NIOSSL
import SignetMiddleware

/// The gateway's listeners as served: the apps' listener and, with `adminListener`, the operators',
/// each with its TLS resolved (a development certificate made once) and its HTTP server. A reload
/// keeps them, and renews the certificates they serve from their files (``renewal(for:)``);
/// addresses and the rest of TLS change only at a restart (``GatewayReloader``).
struct GatewayListeners: Sendable {
    /// What the apps' listener serves, when it speaks HTTPS.
    let served: ServedTLS?
    let server: HTTPServerBuilder
    /// What the admin listener serves, when it speaks HTTPS.
    let adminServed: ServedTLS?
    let adminServer: HTTPServerBuilder?
    /// What the authorization listener serves, when it speaks HTTPS.
    let authorizationServed: ServedTLS?
    let authorizationServer: HTTPServerBuilder?
    /// The apps' listener's event-loop data plane (``LoopProxyHandler``), kept across reloads
    /// with the listeners; each configuration installs its snapshot.
    let dataPlane = DataPlane()

    /// The certificate the apps' listener serves now.
    var tls: GatewayTLS? { served?.tls }
    /// The certificate the admin listener serves now.
    var adminTLS: GatewayTLS? { adminServed?.tls }

    init(_ configuration: GatewayConfiguration, trustedProxies: TrustedProxies?) throws {
        served = try configuration.tls.map {
            try ServedTLS(
                GatewayTLS.resolve($0, named: "tls"),
                clientCertificates: $0.clientCertificates == true,
                applicationProtocols: configuration.appsOfferHTTP2 ? Self.http2Protocols : []
            )
        }
        let connections = ConnectionLimits(perClient: configuration.maxConnectionsPerClient, trusted: trustedProxies)
        let requestTimeout = TimeAmount.seconds(Int64(configuration.requestTimeoutSeconds))
        server = Self.makeServer(
            tls: served,
            proxyProtocol: trustedProxies?.source == .proxyProtocol ? trustedProxies : nil,
            connections: connections,
            requestTimeout: requestTimeout,
            dataPlane: dataPlane
        )
        adminServed = try configuration.adminListener?.tls.map {
            try ServedTLS(
                GatewayTLS.resolve($0, named: "adminListener.tls"),
                clientCertificates: configuration.adminListenerAsksForCertificates,
                applicationProtocols: configuration.adminOffersHTTP2 ? Self.http2Protocols : []
            )
        }
        adminServer = configuration.adminListener.map { [adminServed] _ in
            Self.makeServer(
                tls: adminServed,
                proxyProtocol: nil,
                connections: ConnectionLimits(perClient: configuration.maxConnectionsPerClient, trusted: nil),
                requestTimeout: requestTimeout
            )
        }
        let clientCA = try configuration.authorizationListener?.clientCAFile.map(Self.readCA)
        authorizationServed = try configuration.authorizationListener?.tls.map {
            try ServedTLS(GatewayTLS.resolve($0, named: "authorizationListener.tls"), clientCertificates: false, applicationProtocols: [], clientCA: clientCA)
        }
        authorizationServer = configuration.authorizationListener.map { [authorizationServed] _ in
            Self.makeServer(
                tls: authorizationServed,
                proxyProtocol: nil,
                // Its clients are the proxies in front, each with many connections: the limit is
                // the listener's, not a client's.
                connections: ConnectionLimits(perClient: configuration.connectionLimit, trusted: nil),
                requestTimeout: requestTimeout
            )
        }
    }

    /// The certificates of `configuration`'s files, read and made ready to serve, not yet served:
    /// a reload installs them once the whole new configuration is accepted. A development
    /// certificate without files is kept (a new one would fail every client that trusts it).
    struct Renewal: Sendable {
        fileprivate let prepared: [(ServedTLS, ServedTLS.Prepared)]
        /// The apps' listener's certificate after the renewal.
        let tls: GatewayTLS?

        func install() {
            for (served, next) in prepared { served.install(next) }
        }
    }

    func renewal(for configuration: GatewayConfiguration) throws -> Renewal {
        let apps = try Self.prepare(served, configuration.tls, named: "tls")
        let admin = try Self.prepare(adminServed, configuration.adminListener?.tls, named: "adminListener.tls")
        let authorization = try Self.prepare(authorizationServed, configuration.authorizationListener?.tls, named: "authorizationListener.tls")
        return Renewal(prepared: [apps, admin, authorization].compactMap { $0 }, tls: apps?.1.tls ?? tls)
    }

    /// `tls`'s files read and made ready for `served`; `nil` where nothing is served over TLS or the
    /// certificate is a development one without files.
    private static func prepare(
        _ served: ServedTLS?,
        _ tls: GatewayConfiguration.TLS?,
        named name: String
    ) throws -> (ServedTLS, ServedTLS.Prepared)? {
        guard let served, let tls, let certificateFile = tls.certificateFile, let keyFile = tls.keyFile else { return nil }
        let files = FileManager.default
        guard files.fileExists(atPath: certificateFile) || files.fileExists(atPath: keyFile) || tls.development != true else { return nil }
        return (served, try served.prepare(GatewayTLS.read(certificateFile: certificateFile, keyFile: keyFile, named: name)))
    }

    /// The certificates of `authorizationListener.clientCAFile`.
    static func readCA(_ path: String) throws -> [NIOSSLCertificate] {
        guard let data = FileManager.default.contents(atPath: path),
            let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(data)), !certificates.isEmpty
        else {
            throw ConfigurationError.invalid("authorizationListener.clientCAFile", "authorizationListener.clientCAFile: \(path) holds no PEM certificate")
        }
        return certificates
    }

    /// What a listener with HTTP/2 offers in its handshake, preferred first.
    static let http2Protocols = ["h2", "http/1.1"]

    /// HTTP/1.1 (``http1(requestTimeout:)``), with `dataPlane` on the apps' listener
    /// (``DataPlaneChannel``) — or, over TLS, HTTP/2 or HTTP/1.1 as each client
    /// negotiates among what the listener offers (``NegotiatedHTTPChannel``) — after a PROXY protocol header when the
    /// trusted proxies send one (read before the TLS handshake, where balancers put it), each
    /// connection counted against its client's limit before anything else.
    static func makeServer(
        tls: ServedTLS?,
        proxyProtocol: TrustedProxies?,
        connections: ConnectionLimits,
        requestTimeout: TimeAmount,
        dataPlane: DataPlane? = nil
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            let configuration = http1(requestTimeout: requestTimeout)
            guard let tls else {
                let http1 = HTTP1Channel(responder: responder, configuration: configuration)
                guard let dataPlane else { return limited(http1, proxyProtocol: proxyProtocol, connections: connections) }
                return limited(DataPlaneChannel(base: http1, plane: dataPlane), proxyProtocol: proxyProtocol, connections: connections)
            }
            let negotiated = NegotiatedHTTPChannel(
                responder: responder,
                configuration: configuration,
                idleTimeout: .seconds(60),
                negotiationTimeout: requestTimeout,
                served: tls,
                dataPlane: dataPlane
            )
            return limited(negotiated, proxyProtocol: proxyProtocol, connections: connections)
        }
    }

    private static func limited<Base: ServerChildChannel>(
        _ base: Base,
        proxyProtocol: TrustedProxies?,
        connections: ConnectionLimits
    ) -> any ServerChildChannel {
        guard let proxies = proxyProtocol else { return ConnectionLimitChannel(base: base, limits: connections) }
        return ConnectionLimitChannel(base: ProxyProtocolChannel(base, trusted: proxies), limits: connections)
    }

    /// HTTP/1.1 that ends with a request asking to switch protocols (``ProtocolSwitchHandler``),
    /// with parser refusals answered as problem+json (``ParserErrorResponder``), a body
    /// that must arrive within `requestTimeout` of its head (``RequestDeadlineHandler``), a request
    /// abandoned when its client stops sending (``ClientDepartureHandler``); a
    /// connection that sends nothing for 60 s while a request is read, or between requests, is
    /// closed (nginx's `client_header_timeout` / `client_body_timeout`): a head that is not whole
    /// within 60 s of the previous answer closes it, however it trickles.
    static func http1(requestTimeout: TimeAmount) -> HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                ProtocolSwitchHandler(), ParserErrorResponder(), RequestDeadlineHandler(timeout: requestTimeout),
                ClientDepartureHandler(),
            ],
            idleTimeout: .seconds(60)
        )
    }
}
