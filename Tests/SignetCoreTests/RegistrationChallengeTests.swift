// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Testing

@testable import SignetCore

/// Stateless registration challenges: made and checked with one secret, never with another or as a
/// Digest nonce, within their lifetime, and claimed under one spelling.
@Suite struct RegistrationChallengeTests {
    static let secret = SymmetricKey(data: Array(repeating: UInt8(7), count: 32))
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    struct Counter: RandomNumberGenerator {
        var state: UInt64 = 1
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            return state
        }
    }

    static func check(_ value: String, secret: SymmetricKey = secret, at time: Date = now) throws -> RegistrationChallenge {
        try RegistrationChallenge(verifying: value, secret: secret, lifetime: 120, clockSkew: 30, now: time)
    }

    static func code(_ body: () throws -> Void) -> SignetError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? SignetError)?.code
        }
    }

    @Test func aChallengeChecksWithItsSecretWithinItsLifetime() throws {
        var generator = Counter()
        let challenge = RegistrationChallenge.mint(secret: Self.secret, now: Self.now, using: &generator)
        #expect(challenge.value.utf8.count == 48 && !challenge.value.contains("="))
        #expect(try Self.check(challenge.value).value == challenge.value)
        #expect(try Self.check(challenge.value, at: Self.now.addingTimeInterval(119)).issued == challenge.issued)
        #expect(Self.code { _ = try Self.check(challenge.value, at: Self.now.addingTimeInterval(120)) } == .challengeExpired)
        // Issued more than the clock skew ahead of this instance: not one of ours.
        #expect(Self.code { _ = try Self.check(challenge.value, at: Self.now.addingTimeInterval(-31)) } == .challengeUnknown)
        #expect(try Self.check(challenge.value, at: Self.now.addingTimeInterval(-29)).value == challenge.value)
    }

    @Test func anotherSecretAnAlteredByteOrADigestNonceIsUnknown() throws {
        let challenge = RegistrationChallenge.mint(secret: Self.secret, now: Self.now)
        let other = SymmetricKey(data: Array(repeating: UInt8(8), count: 32))
        #expect(Self.code { _ = try Self.check(challenge.value, secret: other) } == .challengeUnknown)
        var bytes = Base64.urlDecode(challenge.value)!
        bytes[0] ^= 1  // the issue time, which the MAC covers
        #expect(Self.code { _ = try Self.check(Base64.urlEncode(bytes)) } == .challengeUnknown)
        // The same secret's Digest nonce has another MAC context: never a challenge.
        let nonce = DigestNonce.mint(secret: Self.secret, realm: "", now: Self.now)
        #expect(Self.code { _ = try Self.check(nonce.value) } == .challengeUnknown)
        for text in ["", "short", challenge.value + "AAAA", String(challenge.value.dropLast()) + "=", "+" + challenge.value.dropFirst()] {
            #expect(Self.code { _ = try Self.check(text) } == .challengeUnknown, "\(text)")
        }
    }
}
