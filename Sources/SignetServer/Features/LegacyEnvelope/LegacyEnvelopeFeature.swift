// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetCore
import SignetMiddleware

/// `legacy-envelope` routes: bodies encrypted with the seeds' schemes, forwarded decrypted.
struct LegacyEnvelopeFeature: GatewayFeature {
    static let accessModes = [
        AccessMode(
            name: "legacy-envelope",
            notMonitorable: "its gate decrypts the body the upstream reads",
            notExternallyAuthorizable: "its gate decrypts the body the upstream reads",
            check: AccessMode.needs("legacyEnvelope with its keys") { $0.legacyEnvelope != nil }
        )
    ]

    let envelope: GatewayConfiguration.LegacyEnvelope
    /// Derived once at start (PBKDF2 for password keys).
    let envelopeKeys: [EnvelopeKey]
    let dependencies: FeatureDependencies

    init?(_ context: FeatureContext) throws {
        let dependencies = context.dependencies
        guard let envelope = dependencies.configuration.legacyEnvelope else { return nil }
        self.envelope = envelope
        self.envelopeKeys = try envelope.envelopeKeys()
        self.dependencies = dependencies
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        LegacyEnvelopeMiddleware<SignetRequestContext>(
            format: envelope.format,
            keys: envelopeKeys,
            names: envelope.fieldNames,
            plaintextContentType: envelope.plaintextType,
            maximumBodyBytes: dependencies.configuration.maxBodyBytes,
            metrics: dependencies.metrics
        )
    }

    /// The same gate, run by the event-loop data plane (``LoopAuthenticator``).
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        authenticatingLoopGate(for: access, listener: listener)
    }
}
