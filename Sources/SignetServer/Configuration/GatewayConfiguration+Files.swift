// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

extension GatewayConfiguration {
    /// Checks, before anything is opened or written, that every file the configuration reads is
    /// there and every file the gateway creates on first start can be created.
    ///
    /// Without it a start could write `signet.sqlite` and a device CA, then stop at a missing TLS
    /// key: a half-started gateway leaves files a second try then reads as "already set up".
    public func checkFiles() throws {
        var problems: [String] = []
        func mustRead(_ path: String, _ name: String) {
            if !FileManager.default.isReadableFile(atPath: path) { problems.append("cannot read \(name) \(path)") }
        }
        func mayCreate(_ path: String, _ name: String) {
            if FileManager.default.fileExists(atPath: path) {
                mustRead(path, name)
                return
            }
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            if !FileManager.default.isWritableFile(atPath: folder) {
                problems.append("cannot create \(name) \(path): the folder \(folder) is not writable or does not exist")
            }
        }
        /// Two files made together (a certificate and its key): both there, or both creatable.
        func pair(_ certificate: String, _ key: String, _ name: String, create: Bool) {
            let present = [certificate, key].filter { FileManager.default.fileExists(atPath: $0) }
            if present.count == 1 {
                problems.append("\(name): \(present[0]) exists without its pair; give both files or neither")
            } else if present.isEmpty && create {
                mayCreate(certificate, "\(name).certificateFile")
                mayCreate(key, "\(name).keyFile")
            } else {
                mustRead(certificate, "\(name).certificateFile")
                mustRead(key, "\(name).keyFile")
            }
        }

        if case .sqlite(let path) = store { mayCreate(path, "the store") }
        if let tls {
            if let certificate = tls.certificateFile, let key = tls.keyFile {
                pair(certificate, key, "tls", create: tls.development == true)
            }
        }
        if let tls = adminListener?.tls, let certificate = tls.certificateFile, let key = tls.keyFile {
            pair(certificate, key, "adminListener.tls", create: tls.development == true)
        }
        if let deviceCA { pair(deviceCA.certificateFile, deviceCA.keyFile, "deviceCA", create: true) }
        if let responseSigning { mayCreate(responseSigning.keyFile, "the response signing key") }
        if let tokens {
            mayCreate(tokens.keyFile, "the token signing key")
            if let next = tokens.nextKeyFile { mayCreate(next, "the next token signing key") }
            for retired in tokens.retiredKeys ?? [] { mustRead(retired.keyFile, "the retired token key") }
        }
        for key in ohttp?.keys ?? [] { mayCreate(key.keyFile, "the OHTTP key") }
        if let android = androidAttestation {
            if let roots = android.rootsFile { mustRead(roots, "androidAttestation.rootsFile") }
            if let file = android.statusList?.file { mustRead(file, "androidAttestation.statusList.file") }
            if let play = android.playIntegrity {
                if let file = play.decryptionKeyFile { mustRead(file, "the Play Integrity decryption key") }
                if let file = play.verificationKeyFile { mustRead(file, "the Play Integrity verification key") }
                if let standard = play.standard { mustRead(standard.serviceAccountFile, "the Play Integrity service account key") }
            }
        }
        if let appAttest {
            if let roots = appAttest.trustedRootsFile { mustRead(roots, "appAttest.trustedRootsFile") }
            if let exchange = appAttest.receiptExchange { mustRead(exchange.keyFile, "the App Attest developer key") }
        }
        if let trustDocument { mustRead(trustDocument.file, "the trust document") }
        if !problems.isEmpty { throw ConfigurationError(.file, at: "", problems.joined(separator: "; ")) }
    }
}
