// SPDX-License-Identifier: Apache-2.0
import Crypto

/// The banking seed's MAC: HMAC-SHA256 over chosen fields concatenated in a fixed order, with the
/// key chosen by a version the client sends, as lowercase hex.
///
/// The fields are concatenated without separators, exactly as the shipped apps do; that is
/// ambiguous (`"12" + "3"` equals `"1" + "23"`), which is why new clients should move to RFC 9421.
public struct FieldMAC: Sendable {
    private let keys: [String: SymmetricKey]

    /// - Parameter keys: Secrets by key version (for example `"1"`, `"2"`).
    public init(keys: [String: [UInt8]]) {
        self.keys = keys.mapValues { SymmetricKey(data: $0) }
    }

    /// The MAC of `fields` under key `version`, lowercase hex.
    public func mac(_ fields: [String], keyVersion version: String) throws -> String {
        Hex.encode(HMAC<SHA256>.authenticationCode(for: Self.message(fields), using: try key(version)))
    }

    /// Checks a received hex MAC in constant time.
    ///
    /// - Throws: `unknown_key` for an unknown version, `malformed_header` for a MAC that is not hex,
    ///   `signature_invalid` when it does not match.
    public func verify(_ fields: [String], mac: String, keyVersion version: String) throws {
        let key = try key(version)
        guard let received = Hex.decode(mac) else { throw SignetError(.malformedHeader, "the MAC is not hex") }
        guard HMAC<SHA256>.isValidAuthenticationCode(received, authenticating: Self.message(fields), using: key) else {
            throw SignetError(.signatureInvalid, "the MAC does not match the fields")
        }
    }

    static func message(_ fields: [String]) -> [UInt8] { Array(fields.joined().utf8) }

    private func key(_ version: String) throws -> SymmetricKey {
        guard let key = keys[version] else {
            throw SignetError(.unknownKey, "no MAC key has version \(version.debugDescription)")
        }
        return key
    }
}
