// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// A value a server hands out and later checks without having stored it: its issue time, random
/// bytes and an HMAC over both and a context under a server secret, base64url. Any instance holding
/// the secret checks any other's; the time makes them expire; nothing is kept until one is used.
///
/// Layout (36 bytes, 48 characters, no padding so no second spelling): issue time in milliseconds
/// (8 bytes, big-endian) ‖ 12 random bytes ‖ the first 16 bytes of HMAC-SHA256(secret, context ‖
/// the first 20 bytes).
struct StampedToken: Sendable, Hashable {
    /// The token as sent, base64url.
    let value: String
    let issued: Date

    static let byteCount = 36

    static func mint(
        context: [UInt8],
        secret: SymmetricKey,
        now: Date,
        using generator: inout some RandomNumberGenerator
    ) -> StampedToken {
        let millis = UInt64(max(0, (now.timeIntervalSince1970 * 1000).rounded(.down)))
        var bytes = withUnsafeBytes(of: millis.bigEndian, Array.init)
        bytes += (0..<12).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes += tag(context: context, secret: secret, prefix: bytes)
        return StampedToken(value: Base64.urlEncode(bytes), issued: Date(timeIntervalSince1970: TimeInterval(millis) / 1000))
    }

    /// The token in `value` if this secret made it for this context; `nil` otherwise.
    init?(verifying value: String, context: [UInt8], secret: SymmetricKey) {
        guard value.utf8.count == Self.byteCount / 3 * 4, let bytes = Base64.urlDecode(value), bytes.count == Self.byteCount
        else {
            return nil
        }
        let prefix = Array(bytes[..<20])
        guard ConstantTime.equals(bytes[20...], Self.tag(context: context, secret: secret, prefix: prefix)) else {
            return nil
        }
        let millis = prefix[..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // The canonical spelling, whatever alphabet the decoder accepted: what a claim is keyed by.
        self.value = Base64.urlEncode(bytes)
        self.issued = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
    }

    private init(value: String, issued: Date) {
        self.value = value
        self.issued = issued
    }

    private static func tag(context: [UInt8], secret: SymmetricKey, prefix: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: context + prefix, using: secret).prefix(16))
    }
}
