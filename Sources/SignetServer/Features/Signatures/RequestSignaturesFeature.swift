// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware

/// RFC 9421 signatures by a key of at least a trust level: `verified` (any key), `shared-secret`,
/// `device-key`, `app-attest`, `android-key-attestation` and `attested`. One family: the request
/// verifier (``FeatureDependencies/requestVerifier``) authorises the key's trust level before any
/// cryptography, and the gateway screens the signature as soon as a request's head arrives.
struct RequestSignaturesFeature: GatewayFeature {
    static let accessModes: [AccessMode] = [
        AccessMode(name: "verified", signature: .verified),
        AccessMode(name: "shared-secret", signature: .trustLevel(.sharedSecret)),
        AccessMode(name: "device-key", signature: .trustLevel(.deviceKey)),
        AccessMode(name: "app-attest", signature: .trustLevel(.appAttest)),
        AccessMode(name: "android-key-attestation", signature: .trustLevel(.androidKeyAttestation)),
        // An attested device of either platform.
        AccessMode(name: "attested", signature: .trustLevel(.attested)),
    ]

    let dependencies: FeatureDependencies

    init?(_ context: FeatureContext) throws {
        dependencies = context.dependencies
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        guard let requirement = AccessModeRegistry.mode(named: access.mode)?.signature else {
            throw ConfigurationError.invalid("routes", "routes: \(access.mode) is not a signature mode")
        }
        return SignetVerificationMiddleware<SignetRequestContext>(
            verifier: dependencies.requestVerifier,
            requirement: requirement,
            metrics: dependencies.metrics,
            clock: dependencies.clock
        )
    }
}
