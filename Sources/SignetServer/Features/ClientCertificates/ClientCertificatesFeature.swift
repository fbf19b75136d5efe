// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetMiddleware

/// The device CA (client certificates issued at registration) and mutual TLS: the gate of
/// `client-certificate` routes.
struct ClientCertificatesFeature: GatewayFeature {
    static let accessModes = [
        AccessMode(
            name: "client-certificate",
            notExternallyAuthorizable: "the certificate is checked in the TLS handshake of Signet's own listener",
            check: AccessMode.needs("client certificates: set tls.clientCertificates and deviceCA") {
                $0.tls?.clientCertificates == true && $0.deviceCA != nil
            }
        )
    ]

    let dependencies: FeatureDependencies
    let deviceCA: DeviceCertificateAuthority
    /// Checks presented certificates; `nil` unless `tls.clientCertificates` and a device CA.
    let verifier: ClientCertificateVerifier?

    /// `nil` without a `deviceCA`: no certificate is issued, and none is taken.
    init?(_ context: FeatureContext) throws {
        let configuration = context.configuration
        guard let settings = configuration.deviceCA else { return nil }
        dependencies = context.dependencies
        let deviceCA: DeviceCertificateAuthority
        let files = [settings.certificateFile, settings.keyFile]
        let running: (GatewayConfiguration) -> [String] = { [$0.deviceCA?.certificateFile, $0.deviceCA?.keyFile].compactMap { $0 } }
        if !files.allSatisfy({ context.mayCreate($0, among: running) }), !files.allSatisfy(FileManager.default.fileExists) {
            throw ConfigurationError(.file, at: "deviceCA", "deviceCA: \(settings.certificateFile) and \(settings.keyFile) are the running CA's and must exist: a new CA would fail every certificate issued")
        }
        do {
            deviceCA = try DeviceCertificateAuthority.loadOrCreate(
                certificateFile: settings.certificateFile,
                keyFile: settings.keyFile,
                validityDays: settings.validity
            )
        } catch let error as SignetError {
            // The operator's files: unwritable, or not a certificate and its key.
            throw ConfigurationError(.file, at: "deviceCA", "deviceCA: \(error.reason)")
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(.file, at: "deviceCA", "deviceCA: \(settings.certificateFile), \(settings.keyFile): \(error)")
        }
        self.deviceCA = deviceCA
        verifier = configuration.tls?.clientCertificates == true ? ClientCertificateVerifier(deviceCA: deviceCA, devices: context.dependencies.store) : nil
    }

    static func checkFiles(_ configuration: GatewayConfiguration, _ files: inout FileChecks) {
        if let deviceCA = configuration.deviceCA { files.pair(deviceCA.certificateFile, deviceCA.keyFile, "deviceCA", create: true) }
    }

    /// The CA is read (or made) at start.
    static func restartOnlyChanges(from old: GatewayConfiguration, to new: GatewayConfiguration) -> [String] {
        old.deviceCA == new.deviceCA ? [] : ["deviceCA"]
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        ClientCertificateMiddleware<SignetRequestContext>(verifier: verifier, metrics: dependencies.metrics, clock: dependencies.clock)
    }

    /// The same gate, run by the event-loop data plane (``LoopAuthenticator``).
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        authenticatingLoopGate(for: access, listener: listener)
    }

    var keys: [GatewayKeyInventory.Entry] {
        [GatewayKeyInventory.certificate("device CA", deviceCA.issuer.certificate)]
    }
}
