// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SignetAppAttest
import SignetCore
import SignetMiddleware
import SignetStore
import SwiftASN1
import X509

/// `POST /signet/v1/challenges`, `POST /signet/v1/devices`, `DELETE /signet/v1/devices/{id}`.
///
/// These answer before anyone is authenticated, so each is bounded: the body size is checked before
/// parsing, challenges are capped in number and per source, and nothing is stored until the request
/// has proved something (a device is stored only after its proof of possession verified).
struct RegistrationRoutes<Context: SignetRequestContextProtocol>: Sendable {
    let store: any SignetStorage
    let configuration: GatewayConfiguration
    let limiter: SourceRateLimiter
    let metrics: SignetMetrics
    let keyCache: DeviceKeyCache
    let attestationVerifier: AppAttestAttestationVerifier?
    let deviceCA: DeviceCertificateAuthority?
    let clock: @Sendable () -> Date

    static var maximumRegistrationBytes: Int { 16 * 1024 }
    static var allowedAlgorithms: Set<String> { ["ecdsa-p256-sha256", "ed25519"] }

    func add(to router: Router<Context>) {
        router.post("/signet/v1/challenges") { request, context in
            try await issueChallenge(context: context)
        }
        router.post("/signet/v1/devices") { request, context in
            var request = request
            return try await register(&request)
        }
        router.post("/signet/v1/devices/attest") { request, context in
            var request = request
            return try await registerAttested(&request)
        }
        router.delete("/signet/v1/devices/:id") { request, context in
            try await revoke(request, id: context.parameters.get("id") ?? "")
        }
    }

    // MARK: Challenges

    private func issueChallenge(context: Context) async throws -> Response {
        let now = clock()
        guard limiter.allow(context.remoteAddress, now: now) else {
            throw SignetError(.rateLimited, "too many challenges from this source")
        }
        var generator = SystemRandomNumberGenerator()
        let value = Base64.urlEncode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let expiresAt = now.addingTimeInterval(TimeInterval(configuration.challengeTTLSeconds))
        try await store.issueChallenge(
            value,
            expiresAt: expiresAt,
            now: now,
            limit: configuration.maxOutstandingChallenges
        )
        return try Self.json(["challenge": value, "expiresAt": Self.rfc3339(expiresAt)], status: .created)
    }

    // MARK: Device keys

    private func register(_ request: inout Request) async throws -> Response {
        guard configuration.allowUnattestedDevices else {
            throw SignetError(.trustLevelInsufficient, "this server registers attested devices only")
        }
        let body = try await request.collectBody(upTo: Self.maximumRegistrationBytes, refusing: "a registration")
        let registration = try DeviceRegistration(json: Array(buffer: body))
        guard Self.allowedAlgorithms.contains(registration.algorithm) else {
            throw SignetError(.algUnsupported, "device keys use ecdsa-p256-sha256 or ed25519")
        }
        let algorithm = try SignatureAlgorithms.standard.require(registration.algorithm)
        guard algorithm.keyType == registration.key.type else {
            throw SignetError(
                .algMismatch,
                "the key is \(registration.key.type.rawValue), not for \(registration.algorithm)"
            )
        }
        let now = clock()
        // Consume first: every attempt uses up its challenge, right or wrong.
        try await store.consumeChallenge(registration.challenge, now: now)
        guard registration.proves(with: algorithm) else {
            throw SignetError(.signatureInvalid, "the signature over the challenge does not verify with this key")
        }
        var jwk = registration.key.jwk
        let keyID = try jwk.thumbprint
        jwk.kid = keyID
        jwk.alg = registration.algorithm
        let deviceID = "dev_" + Nonce.random()
        var attributes: [String: String] = [:]
        var answer = ["deviceId": deviceID, "keyid": keyID, "trustLevel": TrustLevel.deviceKey.rawValue]
        if let csr = registration.csr {
            // The certificate binds the key that just proved possession; issued before the device is
            // stored, so a bad CSR leaves nothing behind.
            guard let deviceCA else {
                throw SignetError(.malformedMessage, "this server issues no client certificates (no deviceCA)")
            }
            let certificate = try deviceCA.issue(csr: csr, deviceID: deviceID, expectedKey: registration.key, now: now)
            attributes["certificate_serial"] = DeviceCertificateAuthority.serial(certificate)
            attributes["certificate_not_after"] = Self.rfc3339(certificate.notValidAfter)
            answer["certificate"] =
                try certificate.serializeAsPEM().pemString + "\n" + deviceCA.issuer.certificatePEM + "\n"
        }
        try await store.registerDevice(
            DeviceRecord(
                deviceID: deviceID,
                keyID: keyID,
                algorithm: registration.algorithm,
                publicKeyJWK: jwk.jsonString,
                trustLevel: .deviceKey,
                createdAt: now,
                attributes: attributes
            )
        )
        metrics.record(outcome: "registered", reason: nil)
        return try Self.json(answer, status: .created)
    }

    // MARK: App Attest

    /// `{"keyId": "<base64>", "attestation": "<base64>", "challenge": "…"}`: the device's
    /// `clientDataHash` is SHA256 of the challenge string's UTF-8 bytes (or the bytes themselves when
    /// configured `raw`).
    private func registerAttested(_ request: inout Request) async throws -> Response {
        guard let attestationVerifier else { throw SignetError(.notFound, "App Attest is not configured") }
        let body = try await request.collectBody(upTo: Self.maximumRegistrationBytes, refusing: "a registration")
        guard let object = try? JSONSerialization.jsonObject(with: Data(Array(buffer: body))) as? [String: Any],
            let keyID = object["keyId"] as? String, let challenge = object["challenge"] as? String,
            let attestationText = object["attestation"] as? String,
            let attestation = Base64.decode(attestationText) ?? Base64.urlDecode(attestationText)
        else { throw SignetError(.malformedMessage, "keyId, attestation (base64) and challenge are required") }
        let now = clock()
        try await store.consumeChallenge(challenge, now: now)
        let verified = try await attestationVerifier.verify(
            attestation: attestation,
            keyID: keyID,
            challenge: Array(challenge.utf8),
            at: now
        )
        var attributes = [
            "environment": verified.environment.rawValue, "app_id": verified.appID,
            "receipt": Base64.encode(verified.receipt), "leaf_not_after": Self.rfc3339(verified.leafNotAfter),
        ]
        if let osVersion = verified.osVersion { attributes["os_version"] = osVersion }
        var jwk = verified.publicKey.jwk
        jwk.kid = verified.keyID
        jwk.alg = "apple-app-attest"
        let deviceID = "dev_" + Nonce.random()
        try await store.registerDevice(
            DeviceRecord(
                deviceID: deviceID,
                keyID: verified.keyID,
                algorithm: "apple-app-attest",
                publicKeyJWK: jwk.jsonString,
                trustLevel: .appAttest,
                createdAt: now,
                attributes: attributes
            )
        )
        metrics.record(outcome: "attested", reason: nil)
        return try Self.json(
            ["deviceId": deviceID, "keyid": verified.keyID, "environment": verified.environment.rawValue],
            status: .created
        )
    }

    // MARK: Admin

    private func revoke(_ request: Request, id: String) async throws -> Response {
        try AdminToken(token: configuration.adminToken).authorize(request)
        guard try await store.revokeDevice(id: id, at: clock()) else {
            throw SignetError(.notFound, "no device \(id.debugDescription)")
        }
        keyCache.invalidateAll()
        return Response(status: .noContent)
    }

    // MARK: Helpers

    static func json(_ object: [String: String], status: HTTPResponse.Status) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        var headers = HTTPTypes.HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}

/// The body of `POST /signet/v1/devices`.
struct DeviceRegistration {
    let challenge: String
    let algorithm: String
    let key: VerificationKey
    let signature: [UInt8]
    /// A PKCS#10 request (PEM or base64 DER) for a client certificate over the same key.
    let csr: String?

    init(json bytes: [UInt8]) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw SignetError(.malformedMessage, "the registration is not a JSON object")
        }
        guard let challenge = object["challenge"] as? String, let algorithm = object["alg"] as? String,
            let signatureText = object["signature"] as? String
        else { throw SignetError(.malformedMessage, "challenge, alg, publicKey and signature are required") }
        switch object["publicKey"] {
        case let jwk as [String: Any]:
            let data = try JSONSerialization.data(withJSONObject: jwk)
            key = try VerificationKey(jwk: try JWK(json: Array(data)))
        case let pem as String:
            key = try VerificationKey(pem: pem)
        default:
            throw SignetError(.malformedMessage, "publicKey must be a JWK object or a PEM string")
        }
        guard let signature = Base64.urlDecode(signatureText) ?? Base64.decode(signatureText) else {
            throw SignetError(.malformedMessage, "signature must be base64url")
        }
        self.challenge = challenge
        self.algorithm = algorithm
        self.signature = signature
        self.csr = object["csr"] as? String
    }

    /// Whether the signature over the challenge's UTF-8 bytes verifies. P-256 signatures may come raw
    /// (r‖s, RFC 9421 style) or DER (what CryptoKit's `derRepresentation` gives).
    func proves(with algorithm: any SignatureAlgorithm) -> Bool {
        let message = Array(challenge.utf8)
        if (try? algorithm.verify(signature, over: message, with: key)) != nil { return true }
        if key.type == .p256, let publicKey = key.p256PublicKey,
            let der = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        {
            return publicKey.isValidSignature(der, for: message)
        }
        return false
    }
}
