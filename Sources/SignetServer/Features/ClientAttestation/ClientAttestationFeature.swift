// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetMiddleware

/// The gateway as an OAuth Client Attester (draft-ietf-oauth-attestation-based-client-auth-11):
/// Client Attestation JWTs for verified devices (`POST /signet/v1/client-attestations`),
/// challenges (`POST /signet/v1/attestation-challenge`), and the gate of `client-attestation`
/// routes. Attestations are signed with the app tokens' key ring, so it builds on ``TokensFeature``.
struct ClientAttestationFeature: GatewayFeature {
    static let accessModes: [AccessMode] = [
        AccessMode(
            name: "client-attestation",
            options: [
                .init(name: "audience", kind: .string),
                .init(name: "attestationChallenge", kind: .bool),
                .init(name: "forwardAttestation", kind: .bool),
            ],
            notExternallyAuthorizableWith: { access in
                access.flag("attestationChallenge") || !access.flag("forwardAttestation")
                    ? "a client-attestation route keeps the attestation from the upstream, or hands out challenges on its answers, which only Signet's proxy can do (forwardAttestation without attestationChallenge can be judged elsewhere)"
                    : nil
            },
            check: { route, configuration, at in
                guard configuration.clientAttestation != nil, let tokens = configuration.tokens else {
                    throw ConfigurationError.invalid("\(at).access", "\(at).access: client-attestation routes need clientAttestation")
                }
                if let audience = route.access.string("audience"), audience.isEmpty || audience == ClientAttestationIssuer.consentAudience(issuer: tokens.issuer) {
                    throw ConfigurationError.invalid("\(at).audience", "\(at).audience is a server's identifier, not empty nor the consent audience \(ClientAttestationIssuer.consentAudience(issuer: tokens.issuer))")
                }
            }
        )
    ]

    let dependencies: FeatureDependencies
    let issuer: ClientAttestationIssuer
    let verifier: ClientAttestationVerifier

    /// `nil` when `clientAttestation` is not configured.
    init?(_ context: FeatureContext) throws {
        let configuration = context.configuration
        guard let settings = configuration.clientAttestation else { return nil }
        guard let tokensFeature = context.feature(TokensFeature.self), let tokens = tokensFeature.issuer else {
            throw ConfigurationError.invalid("clientAttestation", "clientAttestation needs tokens: attestations are signed with the token keys")
        }
        let dependencies = context.dependencies
        self.dependencies = dependencies
        do {
            issuer = try ClientAttestationIssuer(tokens: tokens, clientID: settings.clientId, lifetimeSeconds: settings.lifetime)
        } catch let error as SignetError {
            throw ConfigurationError.invalid("clientAttestation", error.reason)
        }
        verifier = ClientAttestationVerifier(
            issuer: issuer,
            devices: dependencies.keyCache,
            store: dependencies.store,
            riskLimit: configuration.appAttest?.riskLimit,
            dpop: tokensFeature.dpop,
            proofLifetime: TimeInterval(settings.popLifetime ?? 60),
            challengeLifetime: TimeInterval(settings.challengeLifetime ?? 300),
            clockSkew: TimeInterval(configuration.policy.clockSkewSeconds)
        )
    }

    static let endpoints = ["/signet/v1/client-attestations", "/signet/v1/attestation-challenge"]

    static func validate(_ configuration: GatewayConfiguration) throws { try configuration.validateClientAttestation() }

    /// The challenge endpoint for anyone, and the issuing one behind what `clientAttestation.issueTo`
    /// asks of a device.
    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        guard listener.surfaces.contains(.client), let settings = dependencies.configuration.clientAttestation else { return }
        let d = dependencies
        let routes = SignetClientAttestationRoutes<SignetRequestContext>(
            issuer: issuer,
            verifier: verifier,
            devices: d.store,
            audience: settings.audience,
            clock: d.clock
        )
        routes.addChallenge(to: router)
        // Validation refuses `client-certificate`: a PoP needs a key the app holds.
        let minimum = settings.issuance.minimumTrustLevel ?? .deviceKey
        routes.addIssuing(
            to: router.group().add(
                middleware: SignetVerificationMiddleware(verifier: d.requestVerifier, requirement: .trustLevel(minimum), metrics: d.metrics, clock: d.clock)
            )
        )
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        let settings = dependencies.configuration.clientAttestation
        return ClientAttestationMiddleware<SignetRequestContext>(
            requirement: ClientAttestationRequirement(
                audience: access.string("audience") ?? settings?.audience ?? "",
                requireChallenge: access.flag("attestationChallenge"),
                forward: access.flag("forwardAttestation")
            ),
            verifier: verifier,
            metrics: dependencies.metrics,
            clock: dependencies.clock
        )
    }

    /// The same gate, run by the event-loop data plane (``LoopAuthenticator``).
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        authenticatingLoopGate(for: access, listener: listener)
    }
}
