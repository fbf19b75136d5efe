// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetMiddleware

/// The configured shared secrets: HMAC keys of the request verifier (their ring) and the seeds'
/// `legacy-query-hmac` routes.
struct SharedSecretsFeature: GatewayFeature {
    let secrets: [GatewayConfiguration.SharedSecret]
    /// The verifier's HMAC keys, with their validity.
    let ring: KeyRing
    private let raw: [String: [UInt8]]
    let metrics: SignetMetrics

    init(_ secrets: [GatewayConfiguration.SharedSecret], metrics: SignetMetrics) throws {
        var ring = KeyRing()
        var raw: [String: [UInt8]] = [:]
        for secret in secrets {
            let key = try SigningKey(base64Secret: secret.secretBase64)
            ring.add(
                KeyRecord(keyID: secret.keyId, algorithm: "hmac-sha256", key: key.verificationKey, notBefore: secret.notBefore, notAfter: secret.notAfter)
            )
            raw[secret.keyId] = Base64.decode(secret.secretBase64.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        self.secrets = secrets
        self.ring = ring
        self.raw = raw
        self.metrics = metrics
    }

    func admits(_ requirement: AccessRequirement) -> Bool {
        // A key id no secret has: the route refuses every request (`unknown_key`), as it says.
        if case .legacyQueryHMAC = requirement { return true }
        return false
    }

    func gate(for requirement: AccessRequirement, listener: FeatureListener) -> (any MiddlewareProtocol<Request, Response, SignetRequestContext>)? {
        guard case .legacyQueryHMAC(let keyID) = requirement else { return nil }
        return LegacyQueryHMACMiddleware<SignetRequestContext>(keyID: keyID, secret: raw[keyID], metrics: metrics)
    }

    var keys: [GatewayKeyInventory.Entry] {
        secrets.map { .init(role: "shared secret", name: $0.keyId, algorithm: "hmac-sha256", notBefore: $0.notBefore, notAfter: $0.notAfter) }
    }
}
