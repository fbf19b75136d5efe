// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// WebAuthn authenticator data as App Attest sends it (W3C WebAuthn §6.1).
///
/// Attestations carry attested credential data (flag AT, 0x40): AAGUID, credential id and a COSE
/// key. Assertions carry the same flag but no data (37 bytes). From iOS 27 a CBOR extension map may follow the COSE key with the ED flag clear: it is
/// tolerated (and kept), not rejected.
public struct AuthenticatorData: Sendable, Hashable {
    public var rpIDHash: [UInt8]
    public var flags: UInt8
    public var signCount: UInt32
    public var aaguid: [UInt8]?
    public var credentialID: [UInt8]?
    public var credentialPublicKey: CBORValue?
    public var extensions: CBORValue?
    /// The bytes as received (they are what the signatures cover).
    public var raw: [UInt8]

    public static let attestedCredentialData: UInt8 = 0x40
    public static let extensionData: UInt8 = 0x80

    public init(_ bytes: [UInt8]) throws {
        guard bytes.count >= 37 else {
            throw SignetError(.malformedCBOR, "authenticator data is \(bytes.count) bytes, at least 37 needed")
        }
        raw = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var position = 37
        // App Attest sets AT (0x40) on assertions too, which are exactly 37 bytes: data only if present.
        if flags & Self.attestedCredentialData != 0, bytes.count > 37 {
            guard bytes.count >= position + 18 else {
                throw SignetError(.malformedCBOR, "attested credential data is truncated")
            }
            aaguid = Array(bytes[position..<(position + 16)])
            let length = Int(bytes[position + 16]) << 8 | Int(bytes[position + 17])
            position += 18
            guard bytes.count >= position + length else {
                throw SignetError(.malformedCBOR, "credential id is truncated")
            }
            credentialID = Array(bytes[position..<(position + length)])
            position += length
            let (key, used) = try CBORDecoder().decodePrefix(bytes[position...])
            credentialPublicKey = key
            position += used
        }
        if position < bytes.count {
            // Extensions: announced by ED, or (iOS 27) present with ED clear.
            let (value, used) = try CBORDecoder().decodePrefix(bytes[position...])
            guard case .map = value else {
                throw SignetError(.malformedCBOR, "authenticator data extensions are not a map")
            }
            extensions = value
            position += used
        } else if flags & Self.extensionData != 0 {
            throw SignetError(.malformedCBOR, "the ED flag is set but no extensions follow")
        }
        guard position == bytes.count else {
            throw SignetError(.malformedCBOR, "\(bytes.count - position) bytes after the authenticator data")
        }
    }
}
