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
    let dependencies: FeatureDependencies
    let issuer: AppTokenIssuer?
    let verifier: AppTokenVerifier?
    /// Checks the client certificate when `tokens.issueTo` is `client-certificate`.
    let clientCertificates: ClientCertificateVerifier?
    /// One App Check verifier (and JWKS cache) per HTTP client, made at the first route that needs it.
    private let firebaseVerifiers = NIOLockedValueBox<[ObjectIdentifier: FirebaseAppCheckVerifier]>([:])

    /// `nil` when neither `tokens` nor `firebaseAppCheck` is configured.
    init?(_ dependencies: FeatureDependencies, clientCertificates: ClientCertificateVerifier?) throws {
        let configuration = dependencies.configuration
        guard configuration.tokens != nil || configuration.firebaseAppCheck != nil else { return nil }
        self.dependencies = dependencies
        self.clientCertificates = clientCertificates
        if let tokens = configuration.tokens {
            let issuer = try AppTokenIssuer(
                ring: try tokens.keyRing(),
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
        } else {
            issuer = nil
            verifier = nil
        }
    }

    /// `GET /signet/v1/jwks` for anyone, and `POST /signet/v1/tokens` behind what `tokens.issueTo`
    /// asks of a device: a signature of a device key (or better), an App Attest assertion, or a
    /// client certificate.
    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        guard listener.surfaces.contains(.client), let issuer, let tokens = dependencies.configuration.tokens else { return }
        let d = dependencies
        let routes = SignetTokenRoutes<SignetRequestContext>(issuer: issuer, devices: d.store, clock: d.clock)
        routes.addJWKS(to: router)
        switch tokens.issuance {
        case .clientCertificate:
            routes.addIssuing(
                to: router.group().add(middleware: ClientCertificateMiddleware(verifier: clientCertificates, metrics: d.metrics, clock: d.clock))
            )
        case .deviceKey, .appAttest, .androidKeyAttestation, .attested:
            let minimum: TrustLevel =
                switch tokens.issuance {
                case .appAttest: .appAttest
                case .androidKeyAttestation: .androidKeyAttestation
                case .attested: .attested
                default: .deviceKey
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
    }

    func admits(_ requirement: AccessRequirement) -> Bool {
        guard case .tokens(let acceptance) = requirement else { return false }
        // Each kind of token the route takes must be configured: an unconfigured one would refuse all.
        return (!acceptance.appToken || verifier != nil)
            && (!acceptance.firebaseAppCheck || dependencies.configuration.firebaseAppCheck != nil)
    }

    func gate(for requirement: AccessRequirement, listener: FeatureListener) -> (any MiddlewareProtocol<Request, Response, SignetRequestContext>)? {
        guard case .tokens(let acceptance) = requirement else { return nil }
        return TokenAccessMiddleware<SignetRequestContext>(
            acceptance: acceptance,
            appTokens: verifier,
            firebase: firebase(listener.httpClient),
            metrics: dependencies.metrics,
            clock: dependencies.clock
        )
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
