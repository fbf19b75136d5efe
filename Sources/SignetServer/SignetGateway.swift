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
import SignetAppAttest
import SignetCore
import SignetStore
import SwiftASN1
import X509

/// The Signet gateway: registration routes, `/healthz`, `/metrics`, and a verifying reverse proxy in
/// front of the configured upstream.
///
/// ```swift
/// let gateway = try SignetGateway(configuration: configuration, store: store, logger: logger)
/// try await gateway.application().runService()
/// ```
public struct SignetGateway: Sendable {
    public let configuration: GatewayConfiguration
    public let store: any SignetStorage
    public let metrics: SignetMetrics
    public let logger: Logger
    let requestVerifier: SignetRequestVerifier
    let routes: RouteTable
    let sharedSecrets: [String: [UInt8]]
    let responseSigner: MessageSigner?
    let keyCache: DeviceKeyCache
    let attestationVerifier: AppAttestAttestationVerifier?
    let clock: @Sendable () -> Date
    /// The served certificate when the gateway speaks HTTPS.
    public let tls: GatewayTLS?
    /// The device CA when client certificates are issued.
    public let deviceCA: DeviceCertificateAuthority?
    /// Checks mutual-TLS client certificates; `nil` unless `tls.clientCertificates` and a device CA.
    let clientCertificates: ClientCertificateVerifier?
    let server: HTTPServerBuilder

    public init(
        configuration: GatewayConfiguration,
        store: any SignetStorage,
        logger: Logger,
        clock: @escaping @Sendable () -> Date = Date.init
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.store = store
        self.logger = logger
        self.metrics = SignetMetrics()
        self.clock = clock
        self.routes = try RouteTable(configuration.routes)

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
            StoreKeyResolver(devices: store, sharedSecrets: ring),
            lifetime: .milliseconds(configuration.deviceCacheMilliseconds)
        )
        self.keyCache = keyCache
        var algorithms = SignatureAlgorithms.standard
        if let appAttest = configuration.appAttest {
            let roots = try appAttest.trustedRootsFile.map(Self.certificates(pemFile:))
            let attestPolicy = try AppAttestPolicy(
                appIDs: Set(appAttest.appIDs),
                allowDevelopment: appAttest.allowDevelopment ?? false,
                clientDataHash: appAttest.clientDataHash == "raw" ? .rawChallenge : .sha256OfChallenge,
                roots: roots
            )
            attestationVerifier = AppAttestAttestationVerifier(policy: attestPolicy)
            algorithms = algorithms.registering(AppAttestAlgorithm(appIDs: Set(appAttest.appIDs)))
        } else {
            attestationVerifier = nil
        }
        let verifier = MessageVerifier(
            keys: keyCache,
            algorithms: algorithms,
            policy: policy,
            nonces: store
        )
        self.requestVerifier = SignetRequestVerifier(
            verifier: verifier,
            publicScheme: configuration.signedScheme,
            publicAuthority: configuration.publicAuthority,
            maximumBodyBytes: configuration.maxBodyBytes,
            counters: store,
            counterWindow: configuration.appAttest?.counterWindow ?? 0
        )
        if let tlsConfiguration = configuration.tls {
            let tls = try GatewayTLS.resolve(tlsConfiguration)
            self.tls = tls
            server = try .tls(
                .http1(),
                configuration: tls.channelConfiguration(clientCertificates: tlsConfiguration.clientCertificates == true)
            )
        } else {
            tls = nil
            server = .http1()
        }
        deviceCA = try configuration.deviceCA.map {
            try DeviceCertificateAuthority.loadOrCreate(
                certificateFile: $0.certificateFile,
                keyFile: $0.keyFile,
                validityDays: $0.validityDays ?? 30
            )
        }
        clientCertificates =
            configuration.tls?.clientCertificates == true
            ? deviceCA.map { ClientCertificateVerifier(deviceCA: $0, devices: store) } : nil
        if let signing = configuration.responseSigning {
            guard let text = FileManager.default.contents(atPath: signing.keyFile) else {
                throw SignetError(.invalidKey, "cannot read the response signing key \(signing.keyFile)")
            }
            let key = try SigningKey(text: String(decoding: text, as: UTF8.self))
            let algorithm = try SignatureAlgorithms.standard.require(key.type.defaultAlgorithm)
            responseSigner = MessageSigner(key: key, keyID: signing.keyId, algorithm: algorithm)
        } else {
            responseSigner = nil
        }
    }

    static func certificates(pemFile: String) throws -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: pemFile),
            let certificates = try? certificates(pem: String(decoding: data, as: UTF8.self))
        else { throw SignetError(.malformedMessage, "cannot read trusted roots from \(pemFile)") }
        return certificates
    }

    /// The CERTIFICATE blocks of a PEM text, in order.
    static func certificates(pem: String) throws -> [Certificate] {
        try PEMDocument.parseMultiple(pemString: pem).filter { $0.discriminator == "CERTIFICATE" }.map {
            try Certificate(derEncoded: $0.derBytes)
        }
    }

    /// The Hummingbird application; `onServerRunning` receives the bound port.
    public func application(
        httpClient: HTTPClient = .shared,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: SignetRequestContext.self)
        let proxy = GatewayProxy(
            client: httpClient,
            upstream: configuration.upstream.hasSuffix("/")
                ? String(configuration.upstream.dropLast()) : configuration.upstream,
            responseSigner: responseSigner,
            maximumSignedResponseBytes: 8 << 20,
            timeout: .seconds(Int64(configuration.upstreamTimeoutSeconds))
        )
        RegistrationRoutes<SignetRequestContext>(
            store: store,
            configuration: configuration,
            limiter: SourceRateLimiter(limit: configuration.challengesPerSourcePerMinute),
            metrics: metrics,
            keyCache: keyCache,
            attestationVerifier: attestationVerifier,
            deviceCA: deviceCA,
            clock: clock
        ).add(to: router)
        PinReportRoutes<SignetRequestContext>(
            store: store,
            limiter: SourceRateLimiter(limit: configuration.pinReportsPerSourcePerMinute),
            adminToken: configuration.adminToken,
            metrics: metrics,
            debug: configuration.debug,
            clock: clock
        ).add(to: router)
        router.get("/healthz") { _, _ in "ok\n" }
        let metrics = self.metrics
        router.get("/metrics") { _, _ in metrics.exposition() }
        let gateway = self
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete, .head, .options] {
            router.on("**", method: method) { request, context in
                try await gateway.handle(request, context: context, proxy: proxy)
            }
        }
        var app = Application(
            router: router,
            server: server,
            configuration: .init(
                address: .hostname(configuration.listen.host, port: configuration.listen.port),
                serverName: "signet"
            ),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        app.addServices(
            SweepService(store: store, interval: .seconds(configuration.sweepIntervalSeconds), logger: logger)
        )
        return app
    }

    /// Verifies (per the route table) and forwards one request.
    func handle(_ request: Request, context: SignetRequestContext, proxy: GatewayProxy) async throws -> Response {
        let path = request.head.path ?? "/"
        let requirement = routes.requirement(method: request.method.rawValue, path: path)
        var request = request
        var identity: SignetIdentity?
        var signedMessage: HTTPMessage?
        do {
            switch requirement {
            case .open:
                metrics.record(outcome: "open", reason: nil)
            case .clientCertificate:
                identity = try await verifyClientCertificate(context)
                metrics.record(outcome: "accepted", reason: nil)
            case .legacyQueryHMAC(let keyID):
                identity = try verifyLegacy(request, keyID: keyID)
                metrics.record(outcome: "accepted", reason: nil)
            case .verified, .trustLevel:
                let started = ContinuousClock.now
                let message = try await requestVerifier.message(for: &request)
                let verified = try await requestVerifier.verify(message: message, now: clock())
                try requirement.check(verified)
                metrics.recordVerification(ContinuousClock.now - started)
                metrics.record(outcome: "accepted", reason: nil)
                identity = verified
                signedMessage = message
            }
            return try await proxy.forward(
                request,
                identity: identity,
                signedRequest: signedMessage,
                logger: context.logger
            )
        } catch let error as SignetError {
            metrics.record(outcome: "rejected", reason: error.code.rawValue)
            context.logger.info(
                "signet rejected request",
                metadata: [
                    "reason": .string(error.code.rawValue), "method": .string(request.method.rawValue),
                    "path": .string(path),
                ]
            )
            return ProblemResponse.make(error, debug: configuration.debug)
        }
    }

    /// The device behind the mutual-TLS client certificate (see ``ClientCertificateVerifier``).
    private func verifyClientCertificate(_ context: SignetRequestContext) async throws -> SignetIdentity {
        guard let clientCertificates else {
            throw SignetError(.clientCertificateRequired, "this gateway does not take client certificates")
        }
        return try await clientCertificates.identity(presented: try? await context.peerCertificateDER(), now: clock())
    }

    /// The seed high-score scheme on a route configured for it (no replay protection of its own).
    private func verifyLegacy(_ request: Request, keyID: String) throws -> SignetIdentity {
        guard let secret = sharedSecrets[keyID] else {
            throw SignetError(.unknownKey, "no shared secret \(keyID.debugDescription) is configured")
        }
        _ = try LegacyQueryHMAC(key: secret).verify(query: request.uri.query ?? "")
        return SignetIdentity(deviceID: nil, keyID: keyID, trustLevel: .sharedSecret, algorithm: "legacy-query-hmac")
    }
}
