// SPDX-License-Identifier: Apache-2.0

/// Every feature of the gateway, in the order the root builds them (a feature's dependencies come
/// before it). Adding a feature is a folder under `Features/` and a line here.
///
/// The root builds the core (store, metrics, request verifier, upstream, listeners), then each
/// of these from its part of the configuration, then checks that every route's access mode has
/// its owner among them (``SignetGateway/checkRouteOwners(_:)``).
enum FeatureRegistry {
    static let types: [any GatewayFeature.Type] = [
        OpenAccessFeature.self,
        SharedSecretsFeature.self,
        ClientCertificatesFeature.self,
        PasswordsFeature.self,
        AppAttestFeature.self,
        PlayIntegrityFeature.self,
        AndroidAttestationFeature.self,
        RegistrationFeature.self,
        TokensFeature.self,
        ClientAttestationFeature.self,
        WebBotAuthFeature.self,
        // After client attestations and known agents: its routes take attestations as delivered
        // keys (`signatureKey`) and agents (`agents`).
        RequestSignaturesFeature.self,
        LegacyEnvelopeFeature.self,
        TrustDocumentFeature.self,
        PinReportsFeature.self,
        ObliviousHTTPFeature.self,
        // Last: the console lists every feature's keys.
        OperatorFeature.self,
    ]

    /// The order access modes are listed in (the configuration's errors, the docs): the signature
    /// modes right after `open`, wherever their feature is built.
    static let listed: [any GatewayFeature.Type] = {
        let first: [any GatewayFeature.Type] = [OpenAccessFeature.self, RequestSignaturesFeature.self]
        let firstIDs = Set(first.map { ObjectIdentifier($0) })
        return first + types.filter { !firstIDs.contains(ObjectIdentifier($0)) }
    }()
}
