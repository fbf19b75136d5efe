// SPDX-License-Identifier: Apache-2.0
import Crypto

/// The high-score seed's scheme: `?msg=<message>&hmac=<hex HMAC-SHA256(key, message)>`.
///
/// Kept so that apps already shipped with it can be verified while they migrate to RFC 9421. It has
/// no replay protection of its own: the same URL verifies forever.
public struct LegacyQueryHMAC: Sendable {
    private let key: SymmetricKey

    public init(key: some Sequence<UInt8>) {
        self.key = SymmetricKey(data: Array(key))
    }

    /// The query string the seed client sends for `message`.
    public func query(for message: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: key)
        return "msg=\(FormURLEncoding.encode(Array(message.utf8)))&hmac=\(Hex.encode(mac))"
    }

    /// Verifies a query string and returns the authenticated message.
    ///
    /// Names are compared decoded, as frameworks read them (`ms%67` is `msg` to PHP), and `;` is
    /// refused (older parsers split on it), so no server can read a `msg` other than the one checked.
    /// Forward ``query(for:)`` of the result, not the query received.
    ///
    /// - Throws: `signature_missing` without `hmac`, `component_missing` without `msg`,
    ///   `malformed_header` when either repeats, the query has a `;` or the MAC is not hex,
    ///   `signature_invalid` on mismatch.
    public func verify(query: String) throws -> String {
        guard !query.utf8.contains(UInt8(ascii: ";")) else {
            throw SignetError(.malformedHeader, "the query has a ';', which some servers read as a separator")
        }
        let pairs = query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (
                String(decoding: FormURLEncoding.decode(String(parts[0])), as: UTF8.self),
                parts.count > 1 ? FormURLEncoding.decode(String(parts[1])) : []
            )
        }
        let messages = pairs.filter { $0.0 == "msg" }
        let macs = pairs.filter { $0.0 == "hmac" }
        guard !macs.isEmpty else { throw SignetError(.signatureMissing, "the query has no hmac parameter") }
        guard !messages.isEmpty else { throw SignetError(.componentMissing, "the query has no msg parameter") }
        guard messages.count == 1, macs.count == 1 else {
            throw SignetError(.malformedHeader, "msg and hmac must appear once each")
        }
        guard let received = Hex.decode(String(decoding: macs[0].1, as: UTF8.self)), received.count == 32 else {
            throw SignetError(.malformedHeader, "hmac is not 64 hex digits")
        }
        let message = messages[0].1
        guard HMAC<SHA256>.isValidAuthenticationCode(received, authenticating: message, using: key) else {
            throw SignetError(.signatureInvalid, "hmac does not match msg")
        }
        return String(decoding: message, as: UTF8.self)
    }
}
