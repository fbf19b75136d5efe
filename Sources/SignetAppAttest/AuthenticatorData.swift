// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// WebAuthn authenticator data as App Attest sends it (W3C WebAuthn §6.1).
///
/// Attestations carry attested credential data (flag AT, 0x40): AAGUID, credential id and a COSE
/// key. Assertions carry the same flag but no data (37 bytes). From iOS 27 a CBOR extension map
/// follows (after the COSE key in an attestation, after the counter in an assertion) with the ED flag
/// clear, as Apple's 2026 sample has it: the app build it declares is read into ``appBuild``.
public struct AuthenticatorData: Sendable, Hashable {
    public var rpIDHash: [UInt8]
    public var flags: UInt8
    public var signCount: UInt32
    public var aaguid: [UInt8]?
    public var credentialID: [UInt8]?
    public var credentialPublicKey: CBORValue?
    public var extensions: CBORValue?
    /// The app build the extensions declare; undeclared (both `nil`) without them (iOS 26 and older).
    public var appBuild: AppBuild
    /// The bytes as received (they are what the signatures cover).
    public var raw: [UInt8]

    public static let attestedCredentialData: UInt8 = 0x40
    public static let extensionData: UInt8 = 0x80

    /// Parses authenticator data; `assertion` for an assertion's, which never carries attested
    /// credential data whatever its AT flag says: what follows its 37 bytes is the extension map
    /// (iOS 27 writes it with flags 0x40 or 0xC0).
    public init(_ bytes: [UInt8], assertion: Bool = false) throws {
        guard bytes.count >= 37 else {
            throw SignetError(.malformedCBOR, "authenticator data is \(bytes.count) bytes, at least 37 needed")
        }
        raw = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var position = 37
        // App Attest sets AT (0x40) on assertions too, which carry no credential data.
        if !assertion, flags & Self.attestedCredentialData != 0, bytes.count > 37 {
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
        appBuild = try Self.appBuild(in: extensions)
    }

    static let validationCategoryKey = "apple_validation_category_01"
    static let bundleVersionKey = "apple_bundle_version_01"

    /// `apple_validation_category_01` and `apple_bundle_version_01`, where present. Apple's sample
    /// writes the category as a 4-byte little-endian byte string (`h'01000000'`) and the version as
    /// text; an unsigned integer category is read too (the value is signed by the device either
    /// way). Any other shape is refused as malformed rather than read as undeclared.
    static func appBuild(in extensions: CBORValue?) throws -> AppBuild {
        var build = AppBuild()
        switch extensions?[text: validationCategoryKey] {
        case nil: break
        case .bytes(let bytes)? where bytes.count == 4:
            build.category = AppValidationCategory(
                rawValue: bytes.reversed().reduce(0) { $0 << 8 | UInt32($1) }
            )
        case .unsigned(let number)? where number <= UInt64(UInt32.max):
            build.category = AppValidationCategory(rawValue: UInt32(number))
        default:
            throw SignetError(.malformedCBOR, "\(validationCategoryKey) is not a 4-byte little-endian number")
        }
        switch extensions?[text: bundleVersionKey] {
        case nil: break
        // Printable ASCII only: it reaches the upstream as a field value and the access log.
        case .text(let text)? where (1...AppBuild.maximumVersionBytes).contains(text.utf8.count)
            && text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }):
            build.bundleVersion = text
        default:
            throw SignetError(
                .malformedCBOR,
                "\(bundleVersionKey) is not printable ASCII of 1 to \(AppBuild.maximumVersionBytes) bytes"
            )
        }
        return build
    }
}
