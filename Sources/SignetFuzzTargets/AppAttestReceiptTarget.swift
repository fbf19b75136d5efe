// SPDX-License-Identifier: Apache-2.0
import SignetAppAttest
import SignetCore
import SignetSimulator

extension FuzzTarget {
    /// App Attest receipts: BER-encoded CMS (the first byte even) or their payload (odd).
    static let appAttestReceipt = FuzzTarget(
        "appattest-receipt",
        property: "a receipt payload that parses writes a payload that parses to the same receipt and writes the same bytes",
        seeds: { vectors in
            try vectors.appAttestObjects().flatMap { object -> [[UInt8]] in
                guard let receipt = (try? CBORDecoder().decode(object))?[text: "attStmt"]?[text: "receipt"]?.bytes else { return [] }
                let payload = (try? CMSSignedData(berEncoded: receipt))?.content
                return [[0] + receipt] + (payload.map { [[1] + $0] } ?? [])
            }
        },
        check: { bytes in
            guard let kind = bytes.first else { return }
            let input = Array(bytes.dropFirst())
            let payload: [UInt8]
            if kind % 2 == 0 {
                guard let signed = try? CMSSignedData(berEncoded: input) else { return }
                payload = signed.content
            } else {
                payload = input
            }
            guard let receipt = try? AppAttestReceipt(payload: payload, bytes: input) else { return }
            let written = try serialised { Base64.encode(try DevelopmentReceiptSigner.payload(receipt)) }
            let again = try reparsed(written) { try AppAttestReceipt(payload: Base64.decode($0) ?? [], bytes: input) }
            try expect(
                (try? DevelopmentReceiptSigner.payload(again)).map(Base64.encode) == written,
                "the receipt \(receipt) writes \(written), which reads back as \(again)")
        }
    )
}
