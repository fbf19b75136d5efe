// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// A nonce a server hands a client to put in its next proof — RFC 9449 §9's `DPoP-Nonce`, a
/// client attestation's challenge (draft-ietf-oauth-attestation-based-client-auth §7) — made as a
/// stamped token (`StampedToken`) under a server secret, so any instance holding the secret
/// accepts any other's, and nothing is stored. It limits how far ahead of use a client can make a
/// proof: the proof must carry a nonce issued within the nonce's lifetime. It is not a one-time
/// value — the proof's `jti` is what is claimed once.
///
/// Each ``Purpose`` MACs its own context, so neither a registration challenge nor a nonce of
/// another purpose passes as one.
public struct ServerNonce: Sendable, Hashable {
    /// What a nonce is for, and so the context its MAC covers.
    public struct Purpose: Sendable, Hashable {
        let context: [UInt8]

        /// `DPoP-Nonce` (RFC 9449 §9): context `"signet-dpop-nonce" ‖ 0`.
        public static let dpop = Purpose(context: Array("signet-dpop-nonce".utf8) + [0])
        /// `OAuth-Client-Attestation-Challenge`: context `"signet-client-attestation-challenge" ‖ 0`.
        public static let clientAttestationChallenge = Purpose(context: Array("signet-client-attestation-challenge".utf8) + [0])
    }

    /// The nonce as sent, base64url (48 characters).
    public let value: String
    public let issued: Date

    /// A new nonce for `purpose`, issued at `now`.
    public static func mint(
        _ purpose: Purpose,
        secret: SymmetricKey,
        now: Date,
        using generator: inout some RandomNumberGenerator
    ) -> ServerNonce {
        let token = StampedToken.mint(context: purpose.context, secret: secret, now: now, using: &generator)
        return ServerNonce(value: token.value, issued: token.issued)
    }

    /// A new nonce for `purpose`, issued at `now`, from the system's generator.
    public static func mint(_ purpose: Purpose, secret: SymmetricKey, now: Date) -> ServerNonce {
        var generator = SystemRandomNumberGenerator()
        return mint(purpose, secret: secret, now: now, using: &generator)
    }

    /// When `value` was issued, if this secret made it for `purpose` no later than `clockSkew`
    /// after `now` and no earlier than `lifetime` before it; `nil` otherwise.
    public static func issued(
        verifying value: String,
        _ purpose: Purpose,
        secret: SymmetricKey,
        lifetime: TimeInterval,
        clockSkew: TimeInterval,
        now: Date
    ) -> Date? {
        guard let token = StampedToken(verifying: value, context: purpose.context, secret: secret),
            token.issued.timeIntervalSince(now) <= clockSkew, now.timeIntervalSince(token.issued) < lifetime
        else { return nil }
        return token.issued
    }

    /// Whether `value` is a current nonce of this secret for `purpose`
    /// (``issued(verifying:_:secret:lifetime:clockSkew:now:)``).
    public static func isCurrent(
        _ value: String,
        _ purpose: Purpose,
        secret: SymmetricKey,
        lifetime: TimeInterval,
        clockSkew: TimeInterval,
        now: Date
    ) -> Bool {
        issued(verifying: value, purpose, secret: secret, lifetime: lifetime, clockSkew: clockSkew, now: now) != nil
    }

    private init(value: String, issued: Date) {
        self.value = value
        self.issued = issued
    }
}
