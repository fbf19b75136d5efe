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
        property: "parsed authenticator data (as an attestation's and as an assertion's) rebuilt from its fields is the bytes received, and a declared app build is what its extensions say",
        seeds: { vectors in
            try vectors.appAttestObjects().compactMap { object in
                guard let value = try? CBORDecoder().decode(object) else { return nil }
                return value[text: "authData"]?.bytes ?? value[text: "authenticatorData"]?.bytes
            }
        },
        check: { bytes in
            for assertion in [false, true] {
                guard let data = try? AuthenticatorData(bytes, assertion: assertion) else { continue }
                try expect(!assertion || data.credentialID == nil, "an assertion's data \(bytes) read credential data")
                try checkRebuilt(data, from: bytes)
                try checkAppBuild(data)
            }
        }
    )
}

/// Authenticator data rebuilt from its parsed fields is the bytes it was parsed from.
private func checkRebuilt(_ data: AuthenticatorData, from bytes: [UInt8]) throws {
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

/// The app build read is what the extension map holds: the category's four bytes little-endian (or
/// its number), the version's text; undeclared without them.
private func checkAppBuild(_ data: AuthenticatorData) throws {
    let category: UInt32? =
        switch data.extensions?[text: "apple_validation_category_01"] {
        case .bytes(let four)?: four.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        case .unsigned(let number)?: UInt32(number)
        default: nil
        }
    try expect(data.appBuild.category?.rawValue == category, "the category read is \(String(describing: data.appBuild.category))")
    let version: String? =
        if case .text(let text)? = data.extensions?[text: "apple_bundle_version_01"] { text } else { nil }
    try expect(data.appBuild.bundleVersion == version, "the bundle version read is \(String(describing: data.appBuild.bundleVersion))")
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
