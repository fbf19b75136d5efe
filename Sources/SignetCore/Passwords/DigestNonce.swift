// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// Server nonces for Digest that need no storage: the issue time, random bytes and an HMAC over
/// both and the realm under a server secret, base64url. Any instance holding the secret checks any
/// other's nonces; the time makes them expire.
///
/// Layout (36 bytes, 48 characters): issue time in milliseconds (8 bytes, big-endian) ‖ 12 random
/// bytes ‖ the first 16 bytes of HMAC-SHA256(secret, "signet-digest-nonce" ‖ 0 ‖ realm ‖ 0 ‖ the
/// first 20 bytes).
public struct DigestNonce: Sendable, Hashable {
    /// The nonce as sent in challenges.
    public let value: String
    public let issued: Date

    static let context = Array("signet-digest-nonce".utf8)

    /// A new nonce for `realm`, issued at `now`.
    public static func mint(
        secret: SymmetricKey,
        realm: String,
        now: Date,
        using generator: inout some RandomNumberGenerator
    ) -> DigestNonce {
        let millis = UInt64(max(0, (now.timeIntervalSince1970 * 1000).rounded(.down)))
        var bytes = withUnsafeBytes(of: millis.bigEndian, Array.init)
        bytes += (0..<12).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes += tag(secret: secret, realm: realm, prefix: bytes)
        return DigestNonce(value: Base64.urlEncode(bytes), issued: Date(timeIntervalSince1970: TimeInterval(millis) / 1000))
    }

    public static func mint(secret: SymmetricKey, realm: String, now: Date) -> DigestNonce {
        var generator = SystemRandomNumberGenerator()
        return mint(secret: secret, realm: realm, now: now, using: &generator)
    }

    /// Checks a nonce a client sent back and returns it with its issue time.
    ///
    /// - Throws: `digest_nonce_invalid` when it is not one this secret made for this realm.
    public init(verifying value: String, secret: SymmetricKey, realm: String) throws {
        guard value.utf8.count == 48, let bytes = Base64.urlDecode(value), bytes.count == 36 else {
            throw SignetError(.digestNonceInvalid, "the nonce was not issued here")
        }
        let prefix = Array(bytes[..<20])
        guard ConstantTime.equals(bytes[20...], Self.tag(secret: secret, realm: realm, prefix: prefix)) else {
            throw SignetError(.digestNonceInvalid, "the nonce was not issued here")
        }
        let millis = prefix[..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.value = value
        self.issued = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
    }

    private init(value: String, issued: Date) {
        self.value = value
        self.issued = issued
    }

    private static func tag(secret: SymmetricKey, realm: String, prefix: [UInt8]) -> [UInt8] {
        var message = context
        message.append(0)
        message += Array(realm.utf8)
        message.append(0)
        message += prefix
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: secret).prefix(16))
    }
}
