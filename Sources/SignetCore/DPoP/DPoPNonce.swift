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

    /// When `value` was issued, if this secret made it no later than `clockSkew` after `now` and
    /// no earlier than `lifetime` before it; `nil` otherwise.
    public static func issued(
        verifying value: String,
        secret: SymmetricKey,
        lifetime: TimeInterval,
        clockSkew: TimeInterval,
        now: Date
    ) -> Date? {
        guard let token = StampedToken(verifying: value, context: context, secret: secret),
            token.issued.timeIntervalSince(now) <= clockSkew, now.timeIntervalSince(token.issued) < lifetime
        else { return nil }
        return token.issued
    }

    /// Whether `value` is a current nonce of this secret (``issued(verifying:secret:lifetime:clockSkew:now:)``).
    public static func isCurrent(_ value: String, secret: SymmetricKey, lifetime: TimeInterval, clockSkew: TimeInterval, now: Date) -> Bool {
        issued(verifying: value, secret: secret, lifetime: lifetime, clockSkew: clockSkew, now: now) != nil
    }

    private init(value: String, issued: Date) {
        self.value = value
        self.issued = issued
    }
}
