// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// A one-time registration challenge that is stored only when it is used: a stamped token (`StampedToken`) under a
/// server secret. Issuing one writes nothing, so there is no pool of outstanding challenges that a
/// flood could fill and lock every new device out with; the verifier claims a challenge in its nonce
/// store after its MAC and time checked, once.
///
/// The MAC's context is `"signet-registration-challenge" ‖ 0`.
public struct RegistrationChallenge: Sendable, Hashable {
    /// The challenge as sent to the client, base64url (48 characters).
    public let value: String
    public let issued: Date

    static let context = Array("signet-registration-challenge".utf8) + [0]

    /// A new challenge, issued at `now`.
    public static func mint(
        secret: SymmetricKey,
        now: Date,
        using generator: inout some RandomNumberGenerator
    ) -> RegistrationChallenge {
        let token = StampedToken.mint(context: context, secret: secret, now: now, using: &generator)
        return RegistrationChallenge(value: token.value, issued: token.issued)
    }

    public static func mint(secret: SymmetricKey, now: Date) -> RegistrationChallenge {
        var generator = SystemRandomNumberGenerator()
        return mint(secret: secret, now: now, using: &generator)
    }

    /// Checks a challenge a client sent back: made with this secret, issued no later than
    /// `clockSkew` after `now` (another instance's clock), and not older than `lifetime`.
    ///
    /// - Throws: `challenge_unknown` when this secret did not make it (or it is from the future),
    ///   `challenge_expired` past its lifetime.
    public init(verifying value: String, secret: SymmetricKey, lifetime: TimeInterval, clockSkew: TimeInterval, now: Date)
        throws
    {
        guard let token = StampedToken(verifying: value, context: Self.context, secret: secret),
            token.issued.timeIntervalSince(now) <= clockSkew
        else { throw SignetError(.challengeUnknown, "the challenge was not issued here") }
        guard now.timeIntervalSince(token.issued) < lifetime else {
            throw SignetError(.challengeExpired, "the challenge expired")
        }
        // Canonical: a respelling of the same bytes is the same challenge when it is claimed.
        self.value = token.value
        self.issued = token.issued
    }

    private init(value: String, issued: Date) {
        self.value = value
        self.issued = issued
    }
}
