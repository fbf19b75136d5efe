// SPDX-License-Identifier: Apache-2.0
import SignetAndroid
import SignetCore
import SwiftASN1
import X509

extension FuzzTarget {
    /// Android's KeyDescription, the attestation extension of a key's certificate.
    static let keyDescription = FuzzTarget(
        "key-description",
        property: "a parsed KeyDescription encodes to DER that parses to the same record",
        seeds: { vectors in
            try ["android/ec-tee-chain.pem", "android/attest-key-chain.pem"].flatMap { path in
                try AndroidAttestationChain.derCertificates(pem: vectors.text(path)).compactMap { der in
                    (try? Certificate(derEncoded: der))?.extensions[oid: KeyDescription.extensionOID].map { Array($0.value) }
                }
            }
        },
        check: { bytes in
            guard let record = try? KeyDescription(derEncoded: bytes) else { return }
            let written = try serialised { Base64.encode(try record.derEncoded()) }
            let again = try reparsed(written) { try KeyDescription(derEncoded: Base64.decode($0) ?? []) }
            try expect(again == record, "KeyDescription \(record) encodes to \(written), which reads as \(again)")
        }
    )
}
