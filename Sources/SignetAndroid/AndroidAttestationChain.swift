// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Reading the chain an app sends.
public enum AndroidAttestationChain {
    /// The CERTIFICATE blocks of PEM text, DER, in order. Lenient where Android's tools are:
    /// Java writes base64 in 76-character lines (swift-asn1's PEM reader asks for 64), and chains
    /// concatenated by hand run blocks together (`-----END CERTIFICATE----------BEGIN …`).
    public static func derCertificates(pem: String) throws -> [[UInt8]] {
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var certificates: [[UInt8]] = []
        var rest = pem[...]
        while let start = rest.range(of: begin) {
            guard let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) else {
                throw SignetError(.attestationChainInvalid, "a CERTIFICATE block has no end")
            }
            let body = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            guard let der = Base64.decode(String(body)), !der.isEmpty else {
                throw SignetError(.attestationChainInvalid, "certificate \(certificates.count) is not base64")
            }
            certificates.append(der)
            guard certificates.count <= 16 else { throw SignetError(.attestationChainInvalid, "more than 16 certificates") }
            rest = rest[stop.upperBound...]
        }
        guard !certificates.isEmpty else { throw SignetError(.attestationChainInvalid, "no CERTIFICATE in the PEM text") }
        return certificates
    }
}
