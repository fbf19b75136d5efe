// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import SignetCore
import SignetMiddleware

/// Bearer tokens in place of a signature: Signet app tokens (`tokens`: minted at
/// `POST /signet/v1/tokens`, keys at `/signet/v1/jwks`) and Firebase App Check tokens
/// (`firebaseAppCheck`); the gate of `app-token`, `firebase-app-check` and either.
struct TokensFeature: GatewayFeature {
    static let accessModes: [AccessMode] = {
        let audience = AccessMode.Option(name: "audience", kind: .string)
        let consume = AccessMode.Option(name: "consumeAppCheckTokens", kind: .bool)
        let check: @Sendable (GatewayConfiguration.Route, GatewayConfiguration, String) throws -> Void = { route, configuration, at in
            try GatewayConfiguration.checkTokenRoute(route, configuration, at: at)
        }
        let dpop = AccessMode.Option(name: "dpop", kind: .bool)
        let dpopNonce = AccessMode.Option(name: "dpopNonce", kind: .bool)
        return [
            AccessMode(
                name: "app-token",
                options: [audience, dpop, dpopNonce],
                notExternallyAuthorizableWith: { access in
                    access.flag("dpop") || access.flag("dpopNonce")
                        ? "a DPoP route keeps the token and its proof from the upstream, which only Signet's proxy can do" : nil
                },
                check: check
            ),
            AccessMode(name: "firebase-app-check", options: [consume], optionsOwner: "routes that take App Check tokens", check: check),
            AccessMode(name: "app-token-or-firebase-app-check", options: [audience, consume], check: check),
        ]
    }()

    let dependencies: FeatureDependencies
    let issuer: AppTokenIssuer?
    let verifier: AppTokenVerifier?
    /// Checks the proofs of routes whose app tokens are DPoP-bound.
    let dpop: DPoPVerifier?
    /// Checks the client certificate when `tokens.issueTo` is `client-certificate`.
    let clientCertificates: ClientCertificateVerifier?
    /// One App Check verifier (and JWKS cache) per HTTP client, made at the first route that needs it.
    private let firebaseVerifiers = NIOLockedValueBox<[ObjectIdentifier: FirebaseAppCheckVerifier]>([:])

    /// `nil` when neither `tokens` nor `firebaseAppCheck` is configured.
    init?(_ context: FeatureContext) throws {
        let configuration = context.configuration
        guard configuration.tokens != nil || configuration.firebaseAppCheck != nil else { return nil }
        let dependencies = context.dependencies
        self.dependencies = dependencies
        clientCertificates = context.feature(ClientCertificatesFeature.self)?.verifier
        if let tokens = configuration.tokens {
            let issuer = try AppTokenIssuer(
                ring: try tokens.keyRing { path in
                    context.mayCreate(path) { running in
                        running.tokens.map { [$0.keyFile] + ($0.nextKeyFile.map { [$0] } ?? []) + ($0.retiredKeys ?? []).map(\.keyFile) } ?? []
                    }
                },
                issuer: tokens.issuer,
                audience: tokens.audience,
                lifetimeSeconds: tokens.lifetime
            )
            self.issuer = issuer
            verifier = AppTokenVerifier(
                issuer: issuer,
                devices: dependencies.keyCache,
                nonces: dependencies.store,
                riskLimit: configuration.appAttest?.riskLimit,
                clockSkew: TimeInterval(configuration.policy.clockSkewSeconds)
            )
            dpop = DPoPVerifier(
                store: dependencies.store,
                publicScheme: configuration.signedScheme,
                publicAuthority: configuration.publicAuthority,
                proofLifetime: TimeInterval(tokens.dpopProofLifetime ?? GatewayConfiguration.Tokens.defaultDPoPProofLifetime),
                clockSkew: TimeInterval(configuration.policy.clockSkewSeconds)
            )
        } else {
            issuer = nil
            verifier = nil
            dpop = nil
        }
    }

    /// `GET /signet/v1/jwks` for anyone, and `POST /signet/v1/tokens` behind what `tokens.issueTo`
    /// asks of a device: a signature of a device key (or better), an App Attest assertion, or a
    /// client certificate.
    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        guard listener.surfaces.contains(.client), let issuer, let tokens = dependencies.configuration.tokens else { return }
        let d = dependencies
        let routes = SignetTokenRoutes<SignetRequestContext>(issuer: issuer, devices: d.store, dpop: dpop, clock: d.clock)
        routes.addJWKS(to: router)
        guard let minimum = tokens.issuance.minimumTrustLevel else {
            routes.addIssuing(
                to: router.group().add(middleware: ClientCertificateMiddleware(verifier: clientCertificates, metrics: d.metrics, clock: d.clock))
            )
            return
        }
        routes.addIssuing(
            to: router.group().add(
                middleware: SignetVerificationMiddleware(
                    verifier: d.requestVerifier,
                    requirement: .trustLevel(minimum),
                    metrics: d.metrics,
                    clock: d.clock
                )
            )
        )
    }

    static let endpoints = ["/signet/v1/tokens", "/signet/v1/jwks"]

    static func validate(_ configuration: GatewayConfiguration) throws { try configuration.validateTokens() }

    static func checkFiles(_ configuration: GatewayConfiguration, _ files: inout FileChecks) {
        guard let tokens = configuration.tokens else { return }
        files.mayCreate(tokens.keyFile, "the token signing key")
        if let next = tokens.nextKeyFile { files.mayCreate(next, "the next token signing key") }
        for retired in tokens.retiredKeys ?? [] { files.mustRead(retired.keyFile, "the retired token key") }
    }

    /// What a route of one of the token modes takes.
    static func acceptance(_ access: GatewayConfiguration.Route.Access) -> TokenAcceptance {
        TokenAcceptance(
            appToken: access.mode != "firebase-app-check",
            firebaseAppCheck: access.mode != "app-token",
            audience: access.string("audience"),
            consumeFirebase: access.flag("consumeAppCheckTokens"),
            dpop: access.flag("dpop") || access.flag("dpopNonce") ? DPoPRequirement(requireNonce: access.flag("dpopNonce")) : nil
        )
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        TokenAccessMiddleware<SignetRequestContext>(
            acceptance: Self.acceptance(access),
            appTokens: verifier,
            firebase: firebase(listener.httpClient),
            dpop: dpop,
            metrics: dependencies.metrics,
            clock: dependencies.clock
        )
    }

    /// The same gate, run by the event-loop data plane (``LoopAuthenticator``).
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        authenticatingLoopGate(for: access, listener: listener)
    }

    private func firebase(_ client: HTTPClient) -> FirebaseAppCheckVerifier? {
        guard let appCheck = dependencies.configuration.firebaseAppCheck else { return nil }
        let d = dependencies
        return firebaseVerifiers.withLockedValue { verifiers in
            if let made = verifiers[ObjectIdentifier(client)] { return made }
            let made = FirebaseAppCheckVerifier(
                projectNumber: appCheck.projectNumber,
                appIDs: appCheck.appIds.map(Set.init),
                jwksURL: appCheck.jwksUrl ?? FirebaseAppCheckVerifier.googleJWKS,
                client: client,
                logger: d.logger,
                nonces: d.store
            )
            verifiers[ObjectIdentifier(client)] = made
            return made
        }
    }

    var keys: [GatewayKeyInventory.Entry] {
        guard let issuer else { return [] }
        return issuer.ring.keys.enumerated().map { index, key in
            let role = key.kid == issuer.ring.signingKID ? "app token signing" : key.until == nil ? "app token next" : "app token retired"
            return .init(role: role, name: key.kid, algorithm: "ES256", notAfter: index == 0 ? nil : key.until)
        }
    }
}
