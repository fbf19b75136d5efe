// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetMiddleware

/// The device CA (client certificates issued at registration) and mutual TLS: the gate of
/// `client-certificate` routes.
struct ClientCertificatesFeature: GatewayFeature {
    let dependencies: FeatureDependencies
    /// `nil` without `deviceCA`.
    let deviceCA: DeviceCertificateAuthority?
    /// Checks presented certificates; `nil` unless `tls.clientCertificates` and a device CA.
    let verifier: ClientCertificateVerifier?

    init(_ dependencies: FeatureDependencies) throws {
        let configuration = dependencies.configuration
        self.dependencies = dependencies
        deviceCA = try configuration.deviceCA.map {
            try DeviceCertificateAuthority.loadOrCreate(certificateFile: $0.certificateFile, keyFile: $0.keyFile, validityDays: $0.validity)
        }
        verifier =
            configuration.tls?.clientCertificates == true
            ? deviceCA.map { ClientCertificateVerifier(deviceCA: $0, devices: dependencies.store) } : nil
    }

    func admits(_ requirement: AccessRequirement) -> Bool { requirement == .clientCertificate && verifier != nil }

    func gate(for requirement: AccessRequirement, listener: FeatureListener) -> (any MiddlewareProtocol<Request, Response, SignetRequestContext>)? {
        guard requirement == .clientCertificate else { return nil }
        return ClientCertificateMiddleware<SignetRequestContext>(verifier: verifier, metrics: dependencies.metrics, clock: dependencies.clock)
    }

    var keys: [GatewayKeyInventory.Entry] {
        deviceCA.map { [GatewayKeyInventory.certificate("device CA", $0.issuer.certificate)] } ?? []
    }
}
