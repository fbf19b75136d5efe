// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetMiddleware

/// The configured shared secrets: HMAC keys of the request verifier (``sharedKeys(_:)``) and the
/// seeds' `legacy-query-hmac` routes.
struct SharedSecretsFeature: GatewayFeature {
    static let accessModes = [
        AccessMode(
            name: "legacy-query-hmac",
            // A key id no secret has: the route refuses every request (`unknown_key`), as it says.
            options: [.init(name: "keyId", kind: .string, required: true, purpose: "the shared secret's keyId")],
            notMonitorable: "its gate refuses the query spellings legacy parsers read differently (`;`, a repeated or escaped msg or hmac), which would reach the upstream unjudged",
            notExternallyAuthorizable: "its gate forwards only msg and hmac of the query, and another proxy forwards the query as sent"
        )
    ]

    let secrets: [GatewayConfiguration.SharedSecret]
    private let raw: [String: [UInt8]]
    let metrics: SignetMetrics

    init?(_ context: FeatureContext) throws {
        secrets = context.configuration.sharedSecrets
        var raw: [String: [UInt8]] = [:]
        for secret in secrets {
            raw[secret.keyId] = Base64.decode(secret.secretBase64.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        self.raw = raw
        metrics = context.dependencies.metrics
    }

    /// Every secret decodes to a key.
    static func validate(_ configuration: GatewayConfiguration) throws {
        for (index, secret) in configuration.sharedSecrets.enumerated() {
            do {
                _ = try SigningKey(base64Secret: secret.secretBase64)
            } catch let error as SignetError {
                throw ConfigurationError.invalid("sharedSecrets[\(index)].secretBase64", "sharedSecrets[\(index)].secretBase64: \(error.reason)")
            }
        }
    }

    /// The verifier's HMAC keys, with their validity.
    static func sharedKeys(_ configuration: GatewayConfiguration) throws -> [KeyRecord] {
        try configuration.sharedSecrets.map { secret in
            let key = try SigningKey(base64Secret: secret.secretBase64)
            return KeyRecord(keyID: secret.keyId, algorithm: "hmac-sha256", key: key.verificationKey, notBefore: secret.notBefore, notAfter: secret.notAfter)
        }
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        let keyID = access.string("keyId") ?? ""
        return LegacyQueryHMACMiddleware<SignetRequestContext>(keyID: keyID, secret: raw[keyID], metrics: metrics)
    }

    /// The same gate, run by the event-loop data plane (``LoopAuthenticator``).
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        authenticatingLoopGate(for: access, listener: listener)
    }

    var keys: [GatewayKeyInventory.Entry] {
        secrets.map { .init(role: "shared secret", name: $0.keyId, algorithm: "hmac-sha256", notBefore: $0.notBefore, notAfter: $0.notAfter) }
    }
}
