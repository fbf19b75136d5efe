// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

extension GatewayConfiguration {
    /// Checks, before anything is opened or written, that every file the configuration reads is
    /// there and every file the gateway creates on first start can be created: the core's (store,
    /// listeners, response signing key) and every feature's.
    ///
    /// Without it a start could write `signet.sqlite` and a device CA, then stop at a missing TLS
    /// key: a half-started gateway leaves files a second try then reads as "already set up".
    public func checkFiles() throws {
        var files = FileChecks()
        if case .sqlite(let path) = store { files.mayCreate(path, "the store") }
        if let tls, let certificate = tls.certificateFile, let key = tls.keyFile {
            files.pair(certificate, key, "tls", create: tls.development == true)
        }
        if let tls = adminListener?.tls, let certificate = tls.certificateFile, let key = tls.keyFile {
            files.pair(certificate, key, "adminListener.tls", create: tls.development == true)
        }
        if let tls = authorizationListener?.tls, let certificate = tls.certificateFile, let key = tls.keyFile {
            files.pair(certificate, key, "authorizationListener.tls", create: tls.development == true)
        }
        if let clientCA = authorizationListener?.clientCAFile { files.mustRead(clientCA, "authorizationListener.clientCAFile") }
        if let responseSigning { files.mayCreate(responseSigning.keyFile, "the response signing key") }
        for feature in FeatureRegistry.types { feature.checkFiles(self, &files) }
        if !files.problems.isEmpty { throw ConfigurationError(.file, at: "", files.problems.joined(separator: "; ")) }
    }
}
