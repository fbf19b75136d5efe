// SPDX-License-Identifier: Apache-2.0
import Foundation
import SwiftASN1
import X509

/// The CERTIFICATE blocks of PEM text, in order (other blocks, such as keys, are skipped).
enum PEMCertificates {
    static func parse(_ pem: String) throws -> [Certificate] {
        try PEMDocument.parseMultiple(pemString: pem).filter { $0.discriminator == "CERTIFICATE" }.map {
            try Certificate(derEncoded: $0.derBytes)
        }
    }

    /// The certificates of a configured file (trusted roots): a file that cannot be read or holds
    /// none is a configuration error.
    static func read(file: String) throws -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: file),
            let certificates = try? parse(String(decoding: data, as: UTF8.self)), !certificates.isEmpty
        else { throw ConfigurationError(.file, at: "", "cannot read trusted roots from \(file)") }
        return certificates
    }
}
