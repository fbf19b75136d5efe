// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetAppAttest
import SignetMiddleware

/// Challenges and device registration (keys, App Attest, Android Key Attestation, CSRs), and the
/// device admin routes.
struct RegistrationFeature: GatewayFeature {
    let dependencies: FeatureDependencies
    /// The attestation verifiers of the platforms configured (``AppAttestFeature``).
    let attestationVerifier: AppAttestAttestationVerifier?
    /// Android Key Attestation (``AndroidAttestationFeature``).
    let android: AndroidAttestationFeature?
    /// Issues client certificates at registration (``ClientCertificatesFeature``).
    let certificateIssuer: DeviceCertificateAuthority?
    /// Binds a device to the user whose password registered it (``PasswordsFeature``).
    let login: PasswordAuthenticator?

    init?(_ context: FeatureContext) throws {
        dependencies = context.dependencies
        attestationVerifier = context.feature(AppAttestFeature.self)?.attestationVerifier
        android = context.feature(AndroidAttestationFeature.self)
        certificateIssuer = context.feature(ClientCertificatesFeature.self)?.deviceCA
        login = context.feature(PasswordsFeature.self)?.login
    }

    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        let d = dependencies
        SignetRegistrationRoutes<SignetRequestContext>(
            store: d.store,
            configuration: d.configuration.registration,
            metrics: d.metrics,
            keyCache: d.keyCache,
            attestationVerifier: attestationVerifier,
            android: android?.registrar(httpClient: listener.httpClient),
            certificateIssuer: certificateIssuer,
            login: login,
            admin: d.admin,
            clock: d.clock
        ).add(to: router, surfaces: listener.surfaces)
    }
}
