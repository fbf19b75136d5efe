// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import SignetAppAttest
import SignetCore
import SignetMiddleware
import SignetStore
import SwiftASN1
import X509

/// The Signet gateway: registration routes, `/healthz`, `/metrics`, and a verifying reverse proxy in
/// front of the configured upstream.
///
/// Assembled in one place (``RunningGateway/start(_:logger:)`` in the background,
/// ``SignetGateway/serve(configuration:logger:reload:onAdminRunning:onServerRunning:)`` in the foreground), which opens the
/// configured store first:
///
/// ```swift
/// let running = try await RunningGateway.start(configuration, logger: logger)
/// defer { … try await running.stop() }
/// ```
public struct SignetGateway: Sendable {
    public let configuration: GatewayConfiguration
    public let store: any SignetStorage
    public let metrics: SignetMetrics
    let exposition: PrometheusExposition
    /// The operator console's counts and refusals, flushed into the store every second.
    let activity: ActivityRecorder
    public let logger: Logger
    /// What every feature shares: store, metrics, clock, admin credential, request verifier.
    let dependencies: FeatureDependencies
    /// The capabilities, each from its part of the configuration (``GatewayFeature``).
    let features: [any GatewayFeature]
    let routes: RouteTable
    let responseSigner: MessageSigner?
    /// Kept-alive connections to the upstream.
    let upstream: UpstreamClient
    /// The proxies whose word on the client's address is taken.
    let trustedProxies: TrustedProxies?
    /// The served certificate when the gateway speaks HTTPS.
    public let tls: GatewayTLS?
    let server: HTTPServerBuilder
    /// The admin listener's served certificate and server, when `adminListener` is configured.
    public let adminTLS: GatewayTLS?
    let adminServer: HTTPServerBuilder?
    // The features a reload carries state over from, and the public API reads.
    let certificates: ClientCertificatesFeature
    let passwords: PasswordsFeature?
    let tokens: TokensFeature?
    let oblivious: ObliviousHTTPFeature?

    var clock: @Sendable () -> Date { dependencies.clock }
    var admin: AdminAccess { dependencies.admin }
    var keyCache: DeviceKeyCache { dependencies.keyCache }
    /// The device CA when client certificates are issued.
    public var deviceCA: DeviceCertificateAuthority? { certificates.deviceCA }
    /// The Oblivious HTTP keys, when `ohttp` is configured.
    public var ohttpKeys: OHTTPKeySet? { oblivious?.keySet }
    /// Password login (Digest, Basic) and user accounts, when `passwords` is configured.
    public var passwordLogin: PasswordAuthenticator? { passwords?.login }
    /// Mints app tokens, when `tokens` is configured.
    public var tokenIssuer: AppTokenIssuer? { tokens?.issuer }
    /// What the client listener serves: everything, unless the operators have a listener of their own.
    var clientSurfaces: RouteSurfaces { configuration.adminListener == nil ? .all : .client }

    public init(
        configuration: GatewayConfiguration,
        store: any SignetStorage,
        logger: Logger,
        clock: @escaping @Sendable () -> Date = Date.init
    ) throws {
        try self.init(configuration: configuration, store: store, logger: logger, clock: clock, continuing: nil)
    }

    /// A gateway for `configuration` that carries on from `previous` (a reload, ``GatewayReloader``):
    /// the console's activity, the metrics, the upstream's connections, the servers and, while
    /// `passwords` is unchanged, the login limits stay; everything else is built anew.
    init(
        configuration: GatewayConfiguration,
        store: any SignetStorage,
        logger: Logger,
        clock: @escaping @Sendable () -> Date,
        continuing previous: SignetGateway?
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.store = store
        self.logger = logger
        activity = previous?.activity ?? ActivityRecorder(clock: clock)
        exposition = previous?.exposition ?? PrometheusExposition(activity: activity)
        metrics = exposition.metrics
        routes = try RouteTable(configuration.routes)
        upstream = try previous?.upstream ?? UpstreamClient(origin: UpstreamOrigin(parsing: configuration.upstream))
        trustedProxies = try configuration.proxies()

        // What verifies requests: shared secrets and registered devices' keys, App Attest's
        // assertions as one more algorithm.
        let secrets = try SharedSecretsFeature(configuration.sharedSecrets, metrics: metrics)
        let appAttest = try AppAttestFeature.make(configuration.appAttest)
        let keyCache = DeviceKeyCache(
            StoreKeyResolver(devices: store, sharedSecrets: secrets.ring, metrics: metrics),
            lifetime: .milliseconds(configuration.deviceCacheMilliseconds)
        )
        dependencies = FeatureDependencies(
            configuration: configuration,
            store: store,
            metrics: metrics,
            logger: logger,
            clock: clock,
            // The failed-credential counts outlive a reload that keeps the token: a guesser gets no
            // fresh allowance from an operator's SIGHUP.
            admin: previous.flatMap { $0.configuration.adminToken == configuration.adminToken ? $0.admin : nil }
                ?? AdminAccess(token: configuration.adminToken),
            keyCache: keyCache,
            requestVerifier: try Self.requestVerifier(configuration, store: store, metrics: metrics, keyCache: keyCache, appAttest: appAttest)
        )

        // A reload keeps the servers and what they serve: TLS changes need a restart
        // (`GatewayReloader`), and a development certificate must not be made anew.
        let tls = try previous.map(\.tls) ?? configuration.tls.map { try GatewayTLS.resolve($0) }
        self.tls = tls
        server =
            try previous?.server
            ?? Self.server(
                tls: try tls?.channelConfiguration(clientCertificates: configuration.tls?.clientCertificates == true),
                proxyProtocol: trustedProxies?.source == .proxyProtocol ? trustedProxies : nil
            )
        let adminTLS = try previous.map(\.adminTLS) ?? configuration.adminListener?.tls.map { try GatewayTLS.resolve($0) }
        self.adminTLS = adminTLS
        adminServer =
            try previous?.adminServer
            ?? configuration.adminListener.map { _ in
                Self.server(
                    tls: try adminTLS?.channelConfiguration(clientCertificates: configuration.adminListenerAsksForCertificates),
                    proxyProtocol: nil
                )
            }
        // Made on first start only: at a reload, a new key under the same key id would fail every
        // client that pinned the published one.
        responseSigner = try configuration.responseSigning.map { try Self.responseSigner($0, create: previous == nil) }

        // The features, each from its part of the configuration.
        let d = dependencies
        certificates = try ClientCertificatesFeature(d)
        passwords = try PasswordsFeature(d, previous: previous?.passwords, previousConfiguration: previous?.configuration)
        tokens = try TokensFeature(d, clientCertificates: certificates.verifier)
        oblivious = try ObliviousHTTPFeature(d)
        let attested = appAttest?.attach(d)
        let trustDocument = try configuration.trustDocument.map { trust in
            TrustDocumentFeature(
                route: try TrustDocumentRoute(
                    file: trust.file,
                    servedChain: try tls?.chain.map { try $0.serializeAsPEM().derBytes },
                    host: configuration.publicAuthority.map { String($0.split(separator: ":").first ?? Substring($0)) },
                    now: clock()
                )
            )
        }
        var features: [any GatewayFeature] = [
            RegistrationFeature(
                dependencies: d,
                attestationVerifier: attested?.attestationVerifier,
                certificateIssuer: certificates.deviceCA,
                login: passwords?.login
            ),
            secrets,
            certificates,
            PinReportsFeature(dependencies: d),
        ]
        let optional: [(any GatewayFeature)?] = [attested, passwords, tokens, trustDocument, try LegacyEnvelopeFeature(d), oblivious]
        features += optional.compactMap { $0 }
        // The console lists every feature's keys, with the listener's and the response signer's.
        var keys: [GatewayKeyInventory.Entry] = []
        if let signing = configuration.responseSigning, let responseSigner {
            keys.append(.init(role: "response signing", name: signing.keyId, algorithm: responseSigner.algorithm.name))
        }
        if let leaf = tls?.chain.first { keys.append(GatewayKeyInventory.certificate("TLS certificate", leaf)) }
        features.append(
            OperatorFeature(
                d,
                exposition: exposition,
                readiness: Readiness(store: store, upstream: upstream),
                // The console's own listener decides: the admin listener when there is one.
                secure: configuration.adminListener.map { $0.tls != nil } ?? (tls != nil),
                keys: GatewayKeyInventory(entries: keys + features.flatMap(\.keys))
            )
        )
        self.features = features
    }

    /// RFC 9421 verification as configured: the policy, the algorithms (App Attest's when
    /// configured), nonces and App Attest counters in the store.
    private static func requestVerifier(
        _ configuration: GatewayConfiguration,
        store: any SignetStorage,
        metrics: SignetMetrics,
        keyCache: DeviceKeyCache,
        appAttest: AppAttestFeature.Unattached?
    ) throws -> SignetRequestVerifier {
        var policy = VerificationPolicy.standard
        policy.maximumAge = configuration.policy.maxAgeSeconds
        policy.clockSkew = configuration.policy.clockSkewSeconds
        policy.requireNonce = configuration.policy.requireNonce
        var algorithms = SignatureAlgorithms.standard
        if let appAttest { algorithms = algorithms.registering(appAttest.algorithm) }
        let verifier = MessageVerifier(
            keys: keyCache,
            algorithms: algorithms,
            policy: policy,
            nonces: MeasuredNonceStore(store, metrics: metrics),
            counters: store,
            counterWindow: configuration.appAttest?.counterWindow ?? 0
        )
        return SignetRequestVerifier(
            verifier: verifier,
            publicScheme: configuration.signedScheme,
            publicAuthority: configuration.publicAuthority,
            maximumBodyBytes: configuration.maxBodyBytes,
            riskLimit: configuration.appAttest?.riskLimit
        )
    }

    /// The gateway's response signer; its key file is created only when `create` (a first start).
    private static func responseSigner(_ signing: GatewayConfiguration.ResponseSigning, create: Bool) throws -> MessageSigner {
        let text =
            create
            ? try PrivateKeyFile.loadOrCreate(signing.keyFile, what: "the response signing key") {
                try SigningKey.generate(.p256).pemRepresentation ?? ""
            }
            : try PrivateKeyFile.load(signing.keyFile, what: "the response signing key")
        let key = try SigningKey(text: text)
        let algorithm = try SignatureAlgorithms.standard.require(key.type.defaultAlgorithm)
        return MessageSigner(key: key, keyID: signing.keyId, algorithm: algorithm)
    }

    static func certificates(pemFile: String) throws -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: pemFile),
            let certificates = try? certificates(pem: String(decoding: data, as: UTF8.self))
        else { throw ConfigurationError(.file, at: "", "cannot read trusted roots from \(pemFile)") }
        return certificates
    }

    /// The CERTIFICATE blocks of a PEM text, in order.
    static func certificates(pem: String) throws -> [Certificate] {
        try PEMDocument.parseMultiple(pemString: pem).filter { $0.discriminator == "CERTIFICATE" }.map {
            try Certificate(derEncoded: $0.derBytes)
        }
    }

    /// HTTP/1.1 (``http1``), over TLS when configured, after a PROXY protocol header when the
    /// trusted proxies send one (read before the TLS handshake, where balancers put it).
    static func server(tls: TLSChannelConfiguration?, proxyProtocol: TrustedProxies?) -> HTTPServerBuilder {
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

    /// Methods the gateway proxies; others answer `not_found`.
    static let proxiedMethods: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete, .head, .options]
}

