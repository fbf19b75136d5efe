// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// Server nonces for Digest that need no storage: a stamped token (`StampedToken`) bound to the realm. Any
/// instance holding the secret checks any other's nonces; the time makes them expire.
///
/// The MAC's context is `"signet-digest-nonce" ‖ 0 ‖ realm ‖ 0`.
public struct DigestNonce: Sendable, Hashable {
    /// The nonce as sent in challenges.
    public let value: String
    public let issued: Date

    static func context(realm: String) -> [UInt8] {
        Array("signet-digest-nonce".utf8) + [0] + Array(realm.utf8) + [0]
    }

    /// A new nonce for `realm`, issued at `now`.
    public static func mint(
        secret: SymmetricKey,
        realm: String,
        now: Date,
        using generator: inout some RandomNumberGenerator
    ) -> DigestNonce {
        let token = StampedToken.mint(context: context(realm: realm), secret: secret, now: now, using: &generator)
        return DigestNonce(value: token.value, issued: token.issued)
    }

    public static func mint(secret: SymmetricKey, realm: String, now: Date) -> DigestNonce {
        var generator = SystemRandomNumberGenerator()
        return mint(secret: secret, realm: realm, now: now, using: &generator)
    }

    /// Checks a nonce a client sent back and returns it with its issue time.
    ///
    /// - Throws: `digest_nonce_invalid` when it is not one this secret made for this realm.
    public init(verifying value: String, secret: SymmetricKey, realm: String) throws {
        guard let token = StampedToken(verifying: value, context: Self.context(realm: realm), secret: secret) else {
            throw SignetError(.digestNonceInvalid, "the nonce was not issued here")
        }
        // As sent: the client's Digest response covers these characters.
        self.value = value
        self.issued = token.issued
    }

    private init(value: String, issued: Date) {
        self.value = value
        self.issued = issued
    }
}
