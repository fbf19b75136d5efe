// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware

/// RFC 9421 signatures by a key of at least a trust level: `verified` (any key), `shared-secret`,
/// `device-key`, `app-attest`, `android-key-attestation` and `attested`. One family: the request
/// verifier (``FeatureDependencies/requestVerifier``) authorises the key's trust level before any
/// cryptography, and the gateway screens the signature as soon as a request's head arrives.
///
/// `app-attest` and `attested` routes take an app-build policy of their own (`appCategories`,
/// `minimumAppVersion`, `requireAppBuild`), in place of `appAttest`'s; every one may take keys
/// delivered in `Signature-Key` (`signatureKey`: `hwk` on `verified` routes, `jwt`).
struct RequestSignaturesFeature: GatewayFeature {
    static let accessModes: [AccessMode] = {
        let build = GatewayConfiguration.appBuildOptions
        let keys = GatewayConfiguration.signatureKeyOption
        let agents = WebBotAuthFeature.agentsOption
        let check: @Sendable (GatewayConfiguration.Route, GatewayConfiguration, String) throws -> Void = { route, configuration, at in
            _ = try GatewayConfiguration.signatureKeySchemes(for: route.access, configuration, at: at)
            if route.access.options[WebBotAuthFeature.agentsOption.name] != nil {
                guard configuration.webBotAuth != nil else {
                    throw ConfigurationError.invalid("\(at).agents", "\(at).agents: known agents need webBotAuth")
                }
                _ = try WebBotAuthFeature.names(for: route.access, configuration, at: at)
            }
            guard build.contains(where: { route.access.options[$0.name] != nil }) else { return }
            guard configuration.appAttest != nil else {
                throw ConfigurationError.invalid(
                    "\(at).access",
                    "\(at): appCategories, minimumAppVersion and requireAppBuild judge App Attest devices, and appAttest is not configured"
                )
            }
            _ = try GatewayConfiguration.appBuildPolicy(for: route.access, configuration, at: at)
        }
        return [
            // Not on routes a plain device key passes: a re-signed binary would register one, declare
            // no build, and make the options a promise the route does not keep.
            // Registered clients and, with `agents`, known agents (Web Bot Auth) beside them.
            AccessMode(name: "verified", options: [keys, agents], signature: .verified, check: check),
            // Each trust level, and with `agents` known agents beside it (``AccessRequirement/trustLevelOrAgent(_:)``).
            AccessMode(name: "shared-secret", options: [keys, agents], signature: .trustLevel(.sharedSecret), check: check),
            AccessMode(name: "device-key", options: [keys, agents], signature: .trustLevel(.deviceKey), check: check),
            AccessMode(name: "app-attest", options: build + [keys, agents], signature: .trustLevel(.appAttest), check: check),
            AccessMode(name: "android-key-attestation", options: [keys, agents], signature: .trustLevel(.androidKeyAttestation), check: check),
            // An attested device of either platform.
            AccessMode(name: "attested", options: build + [keys, agents], signature: .trustLevel(.attested), check: check),
        ]
    }()

    let dependencies: FeatureDependencies
    /// Checks the client attestations `jwt` keys deliver, where `clientAttestation` is configured.
    let attestations: ClientAttestationVerifier?
    /// The known agents a `verified` route's `agents` takes, where `webBotAuth` is configured.
    let agents: WebBotAuthFeature?

    init?(_ context: FeatureContext) throws {
        dependencies = context.dependencies
        attestations = context.feature(ClientAttestationFeature.self)?.verifier
        agents = context.feature(WebBotAuthFeature.self)
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        try middleware(for: access)
    }

    /// The same middleware, run by the event-loop data plane (``LoopVerifier``).
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        guard let gate = try? middleware(for: access) else { return nil }
        return .verifying(
            LoopVerifier(
                gate: gate,
                storeTimeout: .milliseconds(dependencies.configuration.storeTimeoutMilliseconds),
                metrics: dependencies.metrics
            )
        )
    }

    private func middleware(for access: GatewayConfiguration.Route.Access) throws -> SignetVerificationMiddleware<SignetRequestContext> {
        guard let requirement = AccessModeRegistry.mode(named: access.mode)?.signature else {
            throw ConfigurationError.invalid("routes", "routes: \(access.mode) is not a signature mode")
        }
        var takes = requirement
        // Known agents beside the route's own clients: an agent's key passes the trust level.
        if case .trustLevel(let level) = requirement, access.options[WebBotAuthFeature.agentsOption.name] != nil {
            takes = .trustLevelOrAgent(level)
        }
        return SignetVerificationMiddleware<SignetRequestContext>(
            verifier: dependencies.requestVerifier,
            requirement: takes,
            appBuild: try GatewayConfiguration.appBuildPolicy(for: access, dependencies.configuration, at: "routes"),
            signatureKeys: try deliveredKeys(for: access),
            metrics: dependencies.metrics,
            clock: dependencies.clock
        )
    }

    /// The keys `access` takes from the request itself: `Signature-Key` schemes, and known agents.
    private func deliveredKeys(for access: GatewayConfiguration.Route.Access) throws -> SignatureKeyAcceptance? {
        let configuration = dependencies.configuration
        let schemes = try GatewayConfiguration.signatureKeySchemes(for: access, configuration, at: "routes")
        var agentAcceptance: AgentAcceptance?
        if access.options[WebBotAuthFeature.agentsOption.name] != nil, let agents {
            agentAcceptance = agents.acceptance(names: try WebBotAuthFeature.names(for: access, configuration, at: "routes"))
        }
        guard schemes != nil || agentAcceptance != nil else { return nil }
        return SignatureKeyAcceptance(schemes: schemes ?? [], attestations: attestations, agents: agentAcceptance)
    }
}
