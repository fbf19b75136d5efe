// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// The route table's proxied routes: each with the middleware its access mode calls for, then
/// ``GatewayProxy``.
extension SignetGateway {
    var proxy: GatewayProxy {
        GatewayProxy(
            upstream: upstream,
            responseSigner: responseSigner,
            maximumBodyBytes: configuration.maxBodyBytes,
            maximumSignedResponseBytes: 8 << 20,
            timeout: .seconds(Int64(configuration.upstreamTimeoutSeconds)),
            publicScheme: configuration.signedScheme,
            publicAuthority: configuration.publicAuthority
        )
    }

    /// The route table as Hummingbird routes: each with the middleware its requirement calls for,
    /// then the proxy.
    func addProxiedRoutes(
        to router: Router<SignetRequestContext>,
        proxy: GatewayProxy,
        firebase: FirebaseAppCheckVerifier?
    ) {
        let open = router.group().add(middleware: OpenRouteMiddleware(metrics: metrics))
        let clientCertificate = router.group().add(
            middleware: ClientCertificateMiddleware(verifier: clientCertificates, metrics: metrics, clock: clock)
        )
        var verified: [AccessRequirement: RouterGroup<SignetRequestContext>] = [:]
        var legacy: [String: RouterGroup<SignetRequestContext>] = [:]
        var password: [AccessRequirement: RouterGroup<SignetRequestContext>] = [:]
        var tokens: [TokenAcceptance: RouterGroup<SignetRequestContext>] = [:]
        let envelope = legacyEnvelopeKeys.map { keys in
            router.group().add(
                middleware: LegacyEnvelopeMiddleware(
                    format: configuration.legacyEnvelope!.format,
                    keys: keys,
                    names: configuration.legacyEnvelope!.fieldNames,
                    plaintextContentType: configuration.legacyEnvelope!.plaintextContentType ?? "application/json",
                    maximumBodyBytes: configuration.maxBodyBytes,
                    metrics: metrics
                )
            )
        }
        for registration in routes.registrations(methods: Self.proxiedMethods.map(\.rawValue)) {
            let group: RouterGroup<SignetRequestContext>
            switch registration.requirement {
            case .open: group = open
            case .clientCertificate: group = clientCertificate
            case .legacyQueryHMAC(let keyID):
                group =
                    legacy[keyID]
                    ?? router.group().add(
                        middleware: LegacyQueryHMACMiddleware(keyID: keyID, secret: sharedSecrets[keyID], metrics: metrics)
                    )
                legacy[keyID] = group
            case .legacyEnvelope:
                // Validation made sure the keys exist when a route needs them.
                guard let envelope else { continue }
                group = envelope
            case .password(let options), .passwordOrDevice(let options):
                // Validation made sure `passwords` is configured when a route needs it.
                guard let passwordLogin else { continue }
                let signatures: SignetRequestVerifier?
                if case .passwordOrDevice = registration.requirement { signatures = requestVerifier } else { signatures = nil }
                group =
                    password[registration.requirement]
                    ?? router.group().add(
                        middleware: PasswordLoginMiddleware(
                            authenticator: passwordLogin,
                            route: options,
                            signatures: signatures,
                            metrics: metrics,
                            maximumBodyBytes: configuration.maxBodyBytes,
                            clock: clock
                        )
                    )
                password[registration.requirement] = group
            case .tokens(let acceptance):
                group =
                    tokens[acceptance]
                    ?? router.group().add(
                        middleware: TokenAccessMiddleware(
                            acceptance: acceptance,
                            appTokens: appTokenVerifier,
                            firebase: firebase,
                            metrics: metrics,
                            clock: clock
                        )
                    )
                tokens[acceptance] = group
            case .verified, .trustLevel:
                group =
                    verified[registration.requirement]
                    ?? router.group().add(
                        middleware: SignetVerificationMiddleware(
                            verifier: requestVerifier,
                            requirement: registration.requirement,
                            metrics: metrics,
                            clock: clock
                        )
                    )
                verified[registration.requirement] = group
            }
            group.on(RouterPath(registration.path), method: HTTPRequest.Method(registration.method)!) { request, context in
                try await proxy.forward(request, context: context)
            }
        }
    }
}
