// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// A server-provided DPoP nonce (RFC 9449 §9): a stamped token (`StampedToken`) under a server
/// secret, so any instance holding the secret accepts any other's, and nothing is stored. It
/// limits how far ahead a client can make proofs: a proof must carry a nonce issued within the
/// nonce's lifetime. It is not a one-time value — the proof's `jti` is what is claimed once.
///
/// The MAC's context is `"signet-dpop-nonce" ‖ 0`, so no registration challenge passes as a nonce.
public struct DPoPNonce: Sendable, Hashable {
    /// The nonce as sent in `DPoP-Nonce`, base64url (48 characters).
    public let value: String
    public let issued: Date

    static let context = Array("signet-dpop-nonce".utf8) + [0]

    /// A new nonce, issued at `now`.
    public static func mint(secret: SymmetricKey, now: Date) -> DPoPNonce {
        var generator = SystemRandomNumberGenerator()
        let token = StampedToken.mint(context: context, secret: secret, now: now, using: &generator)
        return DPoPNonce(value: token.value, issued: token.issued)
    }

    /// Whether `value` is a nonce this secret made, issued no later than `clockSkew` after `now`
    /// and no earlier than `lifetime` before it.
    public static func isCurrent(
        _ value: String,
        secret: SymmetricKey,
        lifetime: TimeInterval,
        clockSkew: TimeInterval,
        now: Date
    ) -> Bool {
        guard let token = StampedToken(verifying: value, context: context, secret: secret) else { return false }
        return token.issued.timeIntervalSince(now) <= clockSkew && now.timeIntervalSince(token.issued) < lifetime
    }

    /// When `value` was issued, read without checking its MAC: only for deciding when to renew a
    /// nonce ``isCurrent(_:secret:lifetime:clockSkew:now:)`` accepted.
    public static func issued(_ value: String) -> Date? {
        guard let bytes = Base64.urlDecode(value), bytes.count == StampedToken.byteCount else { return nil }
        let millis = bytes[..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
    }

    private init(value: String, issued: Date) {
        self.value = value
        self.issued = issued
    }
}
