// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetAppAttest
import SignetCore
import SignetStore

/// `POST /signet/v1/challenges`, `POST /signet/v1/devices`, `POST /signet/v1/devices/attest` (App
/// Attest), `POST /signet/v1/devices/android` (Android Key Attestation) and
/// `DELETE /signet/v1/devices/{id}`: how a device gets a key the verification middleware accepts.
///
/// These answer before anyone is authenticated, so each is bounded: the body size is checked before
/// parsing, challenges are limited per source, and nothing is stored until the request has proved
/// something. Challenges are stateless (SignetCore's `RegistrationChallenge`: MAC'd with a secret the instances
/// share, carrying their issue time): issuing one writes nothing, so no flood can fill a pool of
/// outstanding challenges and lock every new device out; a challenge is claimed in the nonce store
/// once, when a registration uses it. A device is stored only after its proof of possession verified.
///
/// The gateway adds them to its router; an app that embeds the middleware adds them to its own with
/// its own store:
///
/// ```swift
/// SignetRegistrationRoutes<SignetRequestContext>(store: store, configuration: .init()).add(to: router)
/// ```
public struct SignetRegistrationRoutes<Context: SignetRequestContextProtocol>: Sendable {
    /// What registration keeps: devices, receipts and the audit log; challenge claims (nonces) and
    /// the challenges' key (a server secret).
    public typealias Store = DeviceStore & ReceiptStore & AuditStore & NonceStore & ServerSecretStore

    let store: any Store
    let challengeKey: SharedServerKey
    let configuration: RegistrationConfiguration
    let limiter: SharedSourceLimiter
    let metrics: SignetMetrics
    let keyCache: DeviceKeyCache?
    let attestationVerifier: AppAttestAttestationVerifier?
    let android: AndroidAttestationRegistrar?
    let certificateIssuer: (any ClientCertificateIssuing)?
    let login: PasswordAuthenticator?
    let admin: AdminAccess
    let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - store: Where devices live and used challenges are claimed.
    ///   - configuration: What is allowed, and the bounds.
    ///   - metrics: Counts registrations and attestations (`signet_requests_total`).
    ///   - keyCache: The verification middleware's key cache, emptied when a device is revoked.
    ///   - attestationVerifier: Enables `POST /signet/v1/devices/attest`; without it that answers
    ///     `not_found`.
    ///   - android: Enables `POST /signet/v1/devices/android`; without it that answers `not_found`.
    ///   - certificateIssuer: Issues a client certificate when a registration carries a CSR; without
    ///     it such a registration is refused.
    ///   - login: Password login: a registration with `Authorization` credentials (or every one,
    ///     with ``RegistrationConfiguration/requirePasswordLogin``) binds the device to the user.
    ///   - admin: The admin token of device lookup and revocation, with the failed attempts it
    ///     shares with the other admin surfaces; made from ``RegistrationConfiguration/adminToken``
    ///     when not given.
    ///   - clock: The time challenges and devices are stamped with.
    public init(
        store: any Store,
        configuration: RegistrationConfiguration,
        metrics: SignetMetrics = SignetMetrics(),
        keyCache: DeviceKeyCache? = nil,
        attestationVerifier: AppAttestAttestationVerifier? = nil,
        android: AndroidAttestationRegistrar? = nil,
        certificateIssuer: (any ClientCertificateIssuing)? = nil,
        login: PasswordAuthenticator? = nil,
        admin: AdminAccess? = nil,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.login = login
        // Every Signet store keeps the counts every instance shares; another store, this process's.
        let counts = store as? any LoginThrottleStore
        self.admin = admin ?? AdminAccess(token: configuration.adminToken, store: counts)
        self.store = store
        self.challengeKey = SharedServerKey(name: Self.challengeSecretName, store: store)
        self.configuration = configuration
        self.limiter = SharedSourceLimiter("challenges", limit: configuration.challengesPerSourcePerMinute, store: counts)
        self.metrics = metrics
        self.keyCache = keyCache
        self.attestationVerifier = attestationVerifier
        self.android = android
        self.certificateIssuer = certificateIssuer
        self.clock = clock
    }

    /// The name the challenges' key is stored under (`ServerSecretStore`).
    static var challengeSecretName: String { "registration-challenge-key" }
    /// How far a challenge's issue time may be ahead of this instance's clock (another instance's).
    static var clockSkew: TimeInterval { 30 }

    /// The largest registration body read; larger ones answer `body_too_large`.
    public static var maximumRegistrationBytes: Int { 16 * 1024 }
    /// The largest Android registration read: a chain is up to 10 certificates, some with RSA-4096 keys.
    public static var maximumAndroidRegistrationBytes: Int { 64 * 1024 }

    /// Adds the routes of `surfaces` to `router` (or to a group of it): for apps, the challenge
    /// and the two registrations; for operators, a device's record and its revocation.
    public func add(to router: some RouterMethods<Context>, surfaces: RouteSurfaces = .all) {
        if surfaces.contains(.client) {
            router.post("/signet/v1/challenges") { request, context in
                try await issueChallenge(context: context)
            }
            router.post("/signet/v1/devices") { request, context in
                var request = request
                return try await register(&request, context: context)
            }
            router.post("/signet/v1/devices/attest") { request, context in
                var request = request
                return try await registerAttested(&request, context: context)
            }
            router.post("/signet/v1/devices/android") { request, context in
                var request = request
                return try await registerAndroid(&request, context: context)
            }
        }
        guard surfaces.contains(.operator) else { return }
        router.post("/signet/v1/devices/debug") { request, context in
            var request = request
            return try await registerDebug(&request, context: context)
        }
        router.get("/signet/v1/devices/:id") { request, context in
            try await admin.authorize(request, source: context.clientAddress, now: clock())
            return try await show(id: context.parameters.get("id") ?? "")
        }
        router.delete("/signet/v1/devices/:id") { request, context in
            try await admin.authorize(request, source: context.clientAddress, now: clock())
            return try await revoke(id: context.parameters.get("id") ?? "", source: context.clientAddress)
        }
    }

    // MARK: Challenges

    private func issueChallenge(context: Context) async throws -> Response {
        let now = clock()
        try await limiter.admit(context.clientAddress, now: now, refusing: "too many challenges from this source")
        let challenge = RegistrationChallenge.mint(secret: try await challengeKey.key(), now: now)
        let expiresAt = challenge.issued.addingTimeInterval(TimeInterval(configuration.challengeTTLSeconds))
        return try JSONResponse.make(
            ["challenge": challenge.value, "expiresAt": JSONResponse.rfc3339(expiresAt)],
            status: .created
        )
    }

    /// Checks a challenge and claims it, once: `challenge_unknown` when it was not issued here or was
    /// used already, `challenge_expired` past its lifetime. Nothing is written for a challenge that
    /// does not check.
    func consumeChallenge(_ value: String, now: Date) async throws {
        let lifetime = TimeInterval(configuration.challengeTTLSeconds)
        let challenge = try RegistrationChallenge(
            verifying: value,
            secret: try await challengeKey.key(),
            lifetime: lifetime,
            clockSkew: Self.clockSkew,
            now: now
        )
        let claimed = try await store.claim(
            keyID: "signet:challenge",
            nonce: challenge.value,
            until: challenge.issued.addingTimeInterval(lifetime + Self.clockSkew),
            now: now
        )
        guard claimed else { throw SignetError(.challengeUnknown, "the challenge was used already") }
    }

    // MARK: Device keys

    private func register(_ request: inout Request, context: Context) async throws -> Response {
        guard configuration.allowUnattestedDevices else {
            throw SignetError(.trustLevelInsufficient, "this server registers attested devices only")
        }
        try request.requireJSONContent("a registration")
        let body = try await request.collectBody(upTo: Self.maximumRegistrationBytes, refusing: "a registration")
        let user = try await passwordLogin(&request, context: context)
        let registration = try DeviceRegistration(json: Array(buffer: body))
        let algorithm = try DeviceRegistration.algorithm(registration.algorithm, for: registration.key)
        let now = clock()
        // Consume first: every attempt uses up its challenge, right or wrong.
        try await consumeChallenge(registration.challenge, now: now)
        guard registration.proves(with: algorithm) else {
            throw SignetError(.signatureInvalid, "the signature over the challenge does not verify with this key")
        }
        let (keyID, jwk) = try DeviceRegistration.stored(registration.key, algorithm: registration.algorithm)
        let deviceID = "dev_" + Nonce.random()
        var attributes: [String: String] = [:]
        var answer = ["deviceId": deviceID, "keyid": keyID, "trustLevel": TrustLevel.deviceKey.rawValue]
        if let user { answer["user"] = user.user }
        if let csr = registration.csr {
            // The certificate binds the key that just proved possession; issued before the device is
            // stored, so a bad CSR leaves nothing behind.
            guard let certificateIssuer else {
                throw SignetError(.malformedMessage, "this server issues no client certificates (no deviceCA)")
            }
            let issued = try certificateIssuer.issueClientCertificate(
                csr: csr,
                deviceID: deviceID,
                expectedKey: registration.key,
                now: now
            )
            attributes["certificate_serial"] = issued.serial
            attributes["certificate_not_after"] = JSONResponse.rfc3339(issued.notAfter)
            answer["certificate"] = issued.pemChain
        }
        try await save(
            DeviceRecord(
                deviceID: deviceID,
                keyID: keyID,
                algorithm: registration.algorithm,
                publicKeyJWK: jwk.jsonString,
                trustLevel: .deviceKey,
                createdAt: now,
                attributes: attributes,
                user: user?.user
            )
        )
        keyCache?.forget(keyID)
        metrics.record(outcome: "registered", reason: nil)
        return try await answered(JSONResponse.make(answer, status: .created), login: user)
    }

    /// Stores `device`. A key id held by a revoked device says so: the usual case is an app
    /// registering again a key an operator revoked, which a bare `device_exists` left unexplained.
    func save(_ device: DeviceRecord) async throws {
        do {
            try await store.registerDevice(device)
        } catch let error as SignetError where error.code == .deviceExists {
            if let existing = try await store.device(keyID: device.keyID), existing.status == .revoked {
                throw SignetError(.keyRevoked, "this key was revoked and is not registered again: make a new key")
            }
            throw error
        }
    }

    // MARK: App Attest

    /// `{"keyId": "<base64>", "attestation": "<base64>", "challenge": "…"}`: the device's
    /// `clientDataHash` is SHA256 of the challenge string's UTF-8 bytes (or the bytes themselves when
    /// configured `raw`).
    private func registerAttested(_ request: inout Request, context: Context) async throws -> Response {
        guard let attestationVerifier else { throw SignetError(.notFound, "App Attest is not configured") }
        try request.requireJSONContent("a registration")
        let body = try await request.collectBody(upTo: Self.maximumRegistrationBytes, refusing: "a registration")
        let user = try await passwordLogin(&request, context: context)
        guard let object = try? JSONSerialization.jsonObject(with: Data(Array(buffer: body))) as? [String: Any],
            let keyID = object["keyId"] as? String, let challenge = object["challenge"] as? String,
            let attestationText = object["attestation"] as? String,
            let attestation = Base64.decode(attestationText) ?? Base64.urlDecode(attestationText)
        else { throw SignetError(.malformedMessage, "keyId, attestation (base64) and challenge are required") }
        let now = clock()
        try await consumeChallenge(challenge, now: now)
        let verified = try await attestationVerifier.verify(
            attestation: attestation,
            keyID: keyID,
            challenge: Array(challenge.utf8),
            at: now
        )
        var attributes = [
            "environment": verified.environment.rawValue, "app_id": verified.appID,
            "leaf_not_after": JSONResponse.rfc3339(verified.leafNotAfter),
        ]
        if let osVersion = verified.osVersion { attributes["os_version"] = osVersion }
        // What the device declared of its app at registration (iOS 27), for the console and audits;
        // each request's assertion declares it again and is judged on its own.
        if let category = verified.appBuild.category { attributes["app_category"] = category.name }
        if let version = verified.appBuild.bundleVersion { attributes["app_version"] = version }
        var jwk = verified.publicKey.jwk
        jwk.kid = verified.keyID
        jwk.alg = "apple-app-attest"
        let deviceID = "dev_" + Nonce.random()
        // The receipt first: if the device insert then fails, the orphan is never refreshed (due
        // receipts join active devices); the other order could leave a device without a receipt.
        // The ATTEST receipt carries no risk metric: due for its first exchange at once.
        let receipt = verified.receipt
        try await store.saveReceipt(
            ReceiptRecord(
                deviceID: deviceID,
                receipt: receipt.bytes,
                kind: receipt.kind.rawValue,
                createdAt: receipt.createdAt,
                notBefore: receipt.notBefore,
                expiresAt: receipt.expiresAt,
                riskMetric: receipt.riskMetric,
                refreshAt: now
            )
        )
        try await save(
            DeviceRecord(
                deviceID: deviceID,
                keyID: verified.keyID,
                algorithm: "apple-app-attest",
                publicKeyJWK: jwk.jsonString,
                trustLevel: .appAttest,
                createdAt: now,
                attributes: attributes,
                user: user?.user
            )
        )
        keyCache?.forget(verified.keyID)
        metrics.record(outcome: "attested", reason: nil)
        var answer = ["deviceId": deviceID, "keyid": verified.keyID, "environment": verified.environment.rawValue]
        if let user { answer["user"] = user.user }
        return try await answered(JSONResponse.make(answer, status: .created), login: user)
    }

    // MARK: Password login

    /// The user a registration logs in as: checked when it carries `Authorization`, demanded when
    /// the configuration requires a login; `nil` otherwise. Checked before the challenge is spent.
    func passwordLogin(
        _ request: inout Request,
        context: Context,
        maximumBodyBytes: Int = Self.maximumRegistrationBytes
    ) async throws -> PasswordLogin? {
        let authorization = request.headers[values: .authorization]
        guard let login, !authorization.isEmpty || configuration.requirePasswordLogin else {
            if configuration.requirePasswordLogin {
                throw SignetError(.credentialsMissing, "this server registers devices after a password login, which is not configured")
            }
            return nil
        }
        // The body was read whole above (and stays in the request) for auth-int to cover.
        return try await login.authenticate(
            &request,
            context: context,
            route: PasswordRouteOptions(),
            maximumBodyBytes: maximumBodyBytes,
            clock: clock
        )
    }

    func answered(_ response: Response, login: PasswordLogin?) async throws -> Response {
        guard let login else { return response }
        var response = response
        return try await PasswordLoginMiddleware<Context>.authenticate(&response, login: login, maximumBodyBytes: Self.maximumRegistrationBytes, method: .post)
    }

    // MARK: Admin

    /// The device as operators see it: never a key or secret; with App Attest, the receipt's dates
    /// and the risk metric.
    private func show(id: String) async throws -> Response {
        guard let device = try await store.device(id: id) else {
            throw SignetError(.notFound, "no device \(id.debugDescription)")
        }
        var object: [String: Any] = [
            "deviceId": device.deviceID, "keyid": device.keyID, "algorithm": device.algorithm,
            "trustLevel": device.trustLevel.rawValue, "status": device.status.rawValue,
            "createdAt": JSONResponse.rfc3339(device.createdAt), "counter": device.counter,
            "attributes": device.attributes.filter { $0.key != "receipt" },
        ]
        if let revoked = device.revokedAt { object["revokedAt"] = JSONResponse.rfc3339(revoked) }
        if let user = device.user { object["user"] = user }
        if let risk = device.riskMetric { object["riskMetric"] = risk }
        if let receipt = try await store.receipt(deviceID: id) {
            var summary: [String: Any] = [
                "type": receipt.kind, "createdAt": JSONResponse.rfc3339(receipt.createdAt),
                "expiresAt": JSONResponse.rfc3339(receipt.expiresAt),
                "refreshAt": JSONResponse.rfc3339(receipt.refreshAt), "failures": receipt.failures,
            ]
            if let notBefore = receipt.notBefore { summary["notBefore"] = JSONResponse.rfc3339(notBefore) }
            if let risk = receipt.riskMetric { summary["riskMetric"] = risk }
            if let error = receipt.lastError { summary["lastError"] = error }
            object["receipt"] = summary
        }
        return try JSONResponse.make(object: object, status: .ok)
    }

    /// Audited like a revocation in the operator console, under the token's actor name.
    private func revoke(id: String, source: String?) async throws -> Response {
        guard try await store.revokeDevice(id: id, at: clock(), by: admin.token.actor, source: source) else {
            throw SignetError(.notFound, "no device \(id.debugDescription)")
        }
        keyCache?.invalidateAll()
        return Response(status: .noContent)
    }
}
