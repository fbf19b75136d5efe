// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetCore
import SignetMiddleware

extension SignetGateway {
    /// `GET /signet/v1/jwks` for anyone, and `POST /signet/v1/tokens` behind what `tokens.issueTo`
    /// asks of a device: a signature of a device key (or better), an App Attest assertion, or a
    /// client certificate.
    func addTokenRoutes(to router: Router<SignetRequestContext>) {
        guard let tokenIssuer, let tokens = configuration.tokens else { return }
        let routes = SignetTokenRoutes<SignetRequestContext>(issuer: tokenIssuer, devices: store, clock: clock)
        routes.addJWKS(to: router)
        switch tokens.issueTo ?? .deviceKey {
        case .clientCertificate:
            routes.addIssuing(
                to: router.group().add(
                    middleware: ClientCertificateMiddleware(verifier: clientCertificates, metrics: metrics, clock: clock)
                )
            )
        case .deviceKey, .appAttest:
            let minimum: TrustLevel = tokens.issueTo == .appAttest ? .appAttest : .deviceKey
            routes.addIssuing(
                to: router.group().add(
                    middleware: SignetVerificationMiddleware(
                        verifier: requestVerifier,
                        requirement: .trustLevel(minimum),
                        metrics: metrics,
                        clock: clock
                    )
                )
            )
        }
    }
}
