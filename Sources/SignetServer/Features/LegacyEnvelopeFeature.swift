// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetCore
import SignetMiddleware

/// `legacy-envelope` routes: bodies encrypted with the seeds' schemes, forwarded decrypted.
struct LegacyEnvelopeFeature: GatewayFeature {
    let envelope: GatewayConfiguration.LegacyEnvelope
    /// Derived once at start (PBKDF2 for password keys).
    let envelopeKeys: [EnvelopeKey]
    let dependencies: FeatureDependencies

    init?(_ dependencies: FeatureDependencies) throws {
        guard let envelope = dependencies.configuration.legacyEnvelope else { return nil }
        self.envelope = envelope
        self.envelopeKeys = try envelope.envelopeKeys()
        self.dependencies = dependencies
    }

    func admits(_ requirement: AccessRequirement) -> Bool { requirement == .legacyEnvelope }

    func gate(for requirement: AccessRequirement, listener: FeatureListener) -> (any MiddlewareProtocol<Request, Response, SignetRequestContext>)? {
        guard requirement == .legacyEnvelope else { return nil }
        return LegacyEnvelopeMiddleware<SignetRequestContext>(
            format: envelope.format,
            keys: envelopeKeys,
            names: envelope.fieldNames,
            plaintextContentType: envelope.plaintextType,
            maximumBodyBytes: dependencies.configuration.maxBodyBytes,
            metrics: dependencies.metrics
        )
    }
}
