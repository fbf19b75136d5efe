// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
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

    static let endpoints = ["/signet/v1/challenges", "/signet/v1/devices/attest", "/signet/v1/devices"]

    /// A device's record and its revocation; beside the apps' own POSTs under
    /// /signet/v1/devices/ (attest, android), an operator's debug device.
    static let operatorPaths: [(methods: [HTTPRequest.Method], path: String)] = [
        (SignetGateway.proxiedMethods.filter { $0 != .post }, "/signet/v1/devices/:id"),
        ([.post], "/signet/v1/devices/debug"),
    ]

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
