// SPDX-License-Identifier: Apache-2.0
import SignetAppAttest
import SignetCore

extension FuzzTarget {
    /// CBOR as App Attest sends it: attestation and assertion objects.
    static let cbor = FuzzTarget(
        "cbor",
        property: "a decoded value encodes (shortest form) to bytes that decode to the same value, and re-encode to the same bytes",
        seeds: { vectors in try vectors.appAttestObjects() },
        check: { bytes in
            guard let value = try? CBORDecoder().decode(bytes) else { return }
            let written = CBOREncoder.encode(value)
            let again = try reparsed(String(describing: written)) { _ in try CBORDecoder().decode(written) }
            try expect(again == value, "\(bytes) decodes to \(value), its encoding to \(again)")
            try expect(CBOREncoder.encode(again) == written, "the encoding of \(value) is not stable")
        }
    )

    /// WebAuthn authenticator data, as attestations and assertions carry it.
    static let authenticatorData = FuzzTarget(
        "authenticator-data",
        property: "parsed authenticator data rebuilt from its fields is the bytes received",
        seeds: { vectors in
            try vectors.appAttestObjects().compactMap { object in
                guard let value = try? CBORDecoder().decode(object) else { return nil }
                return value[text: "authData"]?.bytes ?? value[text: "authenticatorData"]?.bytes
            }
        },
        check: { bytes in
            guard let data = try? AuthenticatorData(bytes) else { return }
            var rebuilt = data.rpIDHash + [data.flags] + withUnsafeBytes(of: data.signCount.bigEndian, Array.init)
            if let aaguid = data.aaguid, let credentialID = data.credentialID, let key = data.credentialPublicKey {
                rebuilt += aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
                rebuilt += try item(in: bytes, at: rebuilt.count, equal: key, "the credential key")
            } else {
                try expect(
                    data.aaguid == nil && data.credentialID == nil && data.credentialPublicKey == nil,
                    "attested credential data is partly present in \(bytes)")
            }
            if let extensions = data.extensions {
                rebuilt += try item(in: bytes, at: rebuilt.count, equal: extensions, "the extensions")
            }
            try expect(rebuilt == bytes && data.raw == bytes, "authenticator data \(bytes) rebuilds as \(rebuilt)")
        }
    )
}

/// The bytes of the CBOR item at `offset` of `bytes`, which must decode to `value`: CBOR allows
/// longer argument encodings than the encoder writes, so the item is taken as received.
private func item(in bytes: [UInt8], at offset: Int, equal value: CBORValue, _ name: String) throws -> [UInt8] {
    guard offset <= bytes.count, let (read, used) = try? CBORDecoder().decodePrefix(bytes[offset...]) else {
        throw PropertyViolation(description: "\(name) is not a CBOR item at byte \(offset) of \(bytes)")
    }
    try expect(read == value, "\(name) at byte \(offset) of \(bytes) reads \(read), the parser kept \(value)")
    return Array(bytes[offset..<(offset + used)])
}
