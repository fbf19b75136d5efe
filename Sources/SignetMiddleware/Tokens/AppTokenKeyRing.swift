// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// The gateway's token keys: the one it signs with, the next one (published ahead so verifiers
/// have it cached when it starts signing), and retired ones, published and accepted until the last
/// token they signed has expired. Each key is named by its RFC 7638 thumbprint, so every instance
/// holding the same key file gives it the same `kid`.
public struct AppTokenKeyRing: Sendable {
    public struct Key: Sendable {
        public let kid: String
        public let publicKey: P256.Signing.PublicKey
        /// After this time the key is neither published nor accepted; `nil` while it is current or next.
        public let until: Date?

        public init(publicKey: P256.Signing.PublicKey, until: Date? = nil) {
            self.publicKey = publicKey
            self.until = until
            // A P-256 key always has a thumbprint.
            self.kid = (try? VerificationKey(p256X963: publicKey.x963Representation).jwk.thumbprint) ?? ""
        }

        func isPublished(at now: Date) -> Bool { until.map { now < $0 } ?? true }
    }

    public let signingKey: P256.Signing.PrivateKey
    public let signingKID: String
    /// Current first, then next, then retired.
    public let keys: [Key]

    /// - Parameters:
    ///   - signingKey: The key tokens are signed with now.
    ///   - next: The key that signs after the next rotation, published ahead.
    ///   - retired: Earlier signing keys, each with the time the last token it signed expires.
    public init(signingKey: P256.Signing.PrivateKey, next: P256.Signing.PublicKey? = nil, retired: [(P256.Signing.PublicKey, until: Date)] = []) {
        self.signingKey = signingKey
        let current = Key(publicKey: signingKey.publicKey)
        signingKID = current.kid
        var keys = [current]
        if let next { keys.append(Key(publicKey: next)) }
        keys += retired.map { Key(publicKey: $0.0, until: $0.until) }
        // The same key listed twice (a retired key that is the next again) is published once.
        var seen: Set<String> = []
        self.keys = keys.filter { seen.insert($0.kid).inserted }
    }

    /// The key a token names, if it is published at `now`.
    public func key(kid: String, at now: Date) -> Key? {
        keys.first { $0.kid == kid && $0.isPublished(at: now) }
    }

    /// The JWKS (RFC 7517 §5) of the keys published at `now`.
    public func jwks(at now: Date) -> String {
        let entries = keys.filter { $0.isPublished(at: now) }.map { key -> String in
            var jwk = (try? VerificationKey(p256X963: key.publicKey.x963Representation).jwk) ?? JWK(kty: "EC")
            jwk.kid = key.kid
            jwk.alg = "ES256"
            jwk.use = "sig"
            return jwk.jsonString
        }
        return #"{"keys":["# + entries.joined(separator: ",") + "]}"
    }
}
