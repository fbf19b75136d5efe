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
    let requestVerifier: SignetRequestVerifier
    let routes: RouteTable
    let sharedSecrets: [String: [UInt8]]
    let responseSigner: MessageSigner?
    let keyCache: DeviceKeyCache
    let attestationVerifier: AppAttestAttestationVerifier?
    let receiptVerifier: AppAttestReceiptVerifier?
    /// The developer's App Attest key (ES256) for Apple's receipt exchange.
    let developerKey: SigningKey?
    let clock: @Sendable () -> Date
    /// The served certificate when the gateway speaks HTTPS.
    public let tls: GatewayTLS?
    /// The device CA when client certificates are issued.
    public let deviceCA: DeviceCertificateAuthority?
    /// Checks mutual-TLS client certificates; `nil` unless `tls.clientCertificates` and a device CA.
    let clientCertificates: ClientCertificateVerifier?
    let server: HTTPServerBuilder
    /// The admin listener's served certificate and server, when `adminListener` is configured.
    public let adminTLS: GatewayTLS?
    let adminServer: HTTPServerBuilder?
    /// What the client listener serves: everything, unless the operators have a listener of their own.
    var clientSurfaces: RouteSurfaces { configuration.adminListener == nil ? .all : .client }
    /// The legacy envelope keys, derived at start.
    let legacyEnvelopeKeys: [EnvelopeKey]?
    /// The trust document served at `/signet/v1/trust`, checked at start.
    let trustDocument: TrustDocumentRoute?
    /// The Oblivious HTTP keys, when `ohttp` is configured.
    public let ohttpKeys: OHTTPKeySet?
    /// Password login (Digest, Basic) and user accounts, when `passwords` is configured.
    public let passwordLogin: PasswordAuthenticator?
    /// Mints app tokens, when `tokens` is configured.
    public let tokenIssuer: AppTokenIssuer?
    /// Checks app tokens on `app-token` routes.
    let appTokenVerifier: AppTokenVerifier?
    /// Kept-alive connections to the upstream.
    let upstream: UpstreamClient
    /// The admin token, with the failed attempts per source that every admin surface shares.
    let admin: AdminAccess
    /// The proxies whose word on the client's address is taken.
    let trustedProxies: TrustedProxies?

    public init(
        configuration: GatewayConfiguration,
        store: any SignetStorage,
        logger: Logger,
        clock: @escaping @Sendable () -> Date = Date.init
    ) throws {
        try self.init(configuration: configuration, store: store, logger: logger, clock: clock, continuing: nil)
    }

    /// A gateway for `configuration` that carries on from `previous` (a reload, ``GatewayReloader``):
    /// the console's activity, the metrics, the upstream's connections and, while `passwords` is
    /// unchanged, the login limits stay; everything else is built anew.
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
        self.activity = previous?.activity ?? ActivityRecorder(clock: clock)
        self.exposition = previous?.exposition ?? PrometheusExposition(activity: activity)
        self.metrics = exposition.metrics
        self.clock = clock
        self.routes = try RouteTable(configuration.routes)
        self.upstream = try previous?.upstream ?? UpstreamClient(origin: UpstreamOrigin(parsing: configuration.upstream))
        // The failed-credential counts outlive a reload that keeps the token: a guesser gets no
        // fresh allowance from an operator's SIGHUP.
        self.admin =
            previous.flatMap { $0.configuration.adminToken == configuration.adminToken ? $0.admin : nil }
            ?? AdminAccess(token: configuration.adminToken)

        var ring = KeyRing()
        var secrets: [String: [UInt8]] = [:]
        for secret in configuration.sharedSecrets {
            let key = try SigningKey(base64Secret: secret.secretBase64)
            ring.add(
                KeyRecord(
                    keyID: secret.keyId,
                    algorithm: "hmac-sha256",
                    key: key.verificationKey,
                    notBefore: secret.notBefore,
                    notAfter: secret.notAfter
                )
            )
            secrets[secret.keyId] = Base64.decode(secret.secretBase64.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        self.sharedSecrets = secrets

        var policy = VerificationPolicy.standard
        policy.maximumAge = configuration.policy.maxAgeSeconds
        policy.clockSkew = configuration.policy.clockSkewSeconds
        policy.requireNonce = configuration.policy.requireNonce
        let keyCache = DeviceKeyCache(
            StoreKeyResolver(devices: store, sharedSecrets: ring, metrics: metrics),
            lifetime: .milliseconds(configuration.deviceCacheMilliseconds)
        )
        self.keyCache = keyCache
        var algorithms = SignatureAlgorithms.standard
        if let appAttest = configuration.appAttest {
            let roots = try appAttest.trustedRootsFile.map(Self.certificates(pemFile:))
            let attestPolicy = try AppAttestPolicy(
                appIDs: Set(appAttest.appIDs),
                allowDevelopment: appAttest.allowDevelopment ?? false,
                clientDataHash: appAttest.clientDataHash == .raw ? .rawChallenge : .sha256OfChallenge,
                roots: roots
            )
            attestationVerifier = AppAttestAttestationVerifier(policy: attestPolicy)
            receiptVerifier = AppAttestReceiptVerifier(trusting: attestPolicy.receiptRoots)
            developerKey = try appAttest.receiptExchange.map { exchange in
                guard let text = FileManager.default.contents(atPath: exchange.keyFile) else {
                    throw ConfigurationError(.file, at: "", "cannot read the App Attest developer key \(exchange.keyFile)")
                }
                let key = try SigningKey(text: String(decoding: text, as: UTF8.self))
                guard key.p256PrivateKey != nil else {
                    throw ConfigurationError(.file, at: "", "the App Attest developer key is P-256, not \(key.type.rawValue)")
                }
                return key
            }
            algorithms = algorithms.registering(AppAttestAlgorithm(appIDs: Set(appAttest.appIDs)))
        } else {
            attestationVerifier = nil
            receiptVerifier = nil
            developerKey = nil
        }
        let verifier = MessageVerifier(
            keys: keyCache,
            algorithms: algorithms,
            policy: policy,
            nonces: MeasuredNonceStore(store, metrics: metrics),
            counters: store,
            counterWindow: configuration.appAttest?.counterWindow ?? 0
        )
        self.requestVerifier = SignetRequestVerifier(
            verifier: verifier,
            publicScheme: configuration.signedScheme,
            publicAuthority: configuration.publicAuthority,
            maximumBodyBytes: configuration.maxBodyBytes,
            riskLimit: configuration.appAttest?.riskLimit
        )
        trustedProxies = try configuration.proxies()
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
        deviceCA = try configuration.deviceCA.map {
            try DeviceCertificateAuthority.loadOrCreate(
                certificateFile: $0.certificateFile,
                keyFile: $0.keyFile,
                validityDays: $0.validityDays ?? 30
            )
        }
        ohttpKeys = try configuration.ohttp.map(OHTTPKeySet.loadOrCreate)
        if let previous, let login = previous.passwordLogin,
            GatewayConfiguration.sameJSON(previous.configuration.passwords, configuration.passwords)
        {
            passwordLogin = login
        } else {
            passwordLogin = try configuration.passwordLogin.map { try PasswordAuthenticator(configuration: $0, store: store) }
        }
        legacyEnvelopeKeys = try configuration.legacyEnvelope?.envelopeKeys()
        if let tokens = configuration.tokens {
            let issuer = try AppTokenIssuer(
                ring: try tokens.keyRing(),
                issuer: tokens.issuer,
                audience: tokens.audience,
                lifetimeSeconds: tokens.lifetime
            )
            tokenIssuer = issuer
            appTokenVerifier = AppTokenVerifier(
                issuer: issuer,
                devices: keyCache,
                nonces: store,
                riskLimit: configuration.appAttest?.riskLimit,
                clockSkew: TimeInterval(configuration.policy.clockSkewSeconds)
            )
        } else {
            tokenIssuer = nil
            appTokenVerifier = nil
        }
        trustDocument = try configuration.trustDocument.map { [tls, configuration, clock] trust in
            try TrustDocumentRoute(
                file: trust.file,
                servedChain: try tls?.chain.map { try $0.serializeAsPEM().derBytes },
                host: configuration.publicAuthority.map { String($0.split(separator: ":").first ?? Substring($0)) },
                now: clock()
            )
        }
        clientCertificates =
            configuration.tls?.clientCertificates == true
            ? deviceCA.map { ClientCertificateVerifier(deviceCA: $0, devices: store) } : nil
        if let signing = configuration.responseSigning {
            // Made on first start only: at a reload, a new key under the same key id would fail
            // every client that pinned the published one.
            let text =
                previous == nil
                ? try PrivateKeyFile.loadOrCreate(signing.keyFile, what: "the response signing key") {
                    try SigningKey.generate(.p256).pemRepresentation ?? ""
                }
                : try PrivateKeyFile.load(signing.keyFile, what: "the response signing key")
            let key = try SigningKey(text: text)
            let algorithm = try SignatureAlgorithms.standard.require(key.type.defaultAlgorithm)
            responseSigner = MessageSigner(key: key, keyID: signing.keyId, algorithm: algorithm)
        } else {
            responseSigner = nil
        }
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

