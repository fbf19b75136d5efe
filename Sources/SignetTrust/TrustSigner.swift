// SPDX-License-Identifier: Apache-2.0
import JWTKit
import SignetCore

/// Signs trust documents with the offline trust key (`signet trust sign`).
public struct TrustSigner: Sendable {
    private let keys: JWTKeyCollection
    private let kid: String

    /// - Parameters:
    ///   - key: A P-256 key (ES256) or an Ed25519 key (EdDSA).
    ///   - kid: The key id the app knows the matching public key by.
    public init(key: SigningKey, kid: String) async throws {
        let keys = JWTKeyCollection()
        if let p256 = key.p256PrivateKey {
            await keys.add(ecdsa: try ES256PrivateKey(backing: p256), kid: JWKIdentifier(string: kid))
        } else if let ed25519 = key.ed25519PrivateKey {
            await keys.add(eddsa: EdDSA.PrivateKey(backing: ed25519), kid: JWKIdentifier(string: kid))
        } else {
            throw SignetError(.invalidKey, "a trust key is P-256 (ES256) or Ed25519 (EdDSA), not \(key.type.rawValue)")
        }
        self.keys = keys
        self.kid = kid
    }

    /// The compact JWS of `document`.
    public func sign(_ document: TrustDocument) async throws -> String {
        try await keys.sign(document, kid: JWKIdentifier(string: kid))
    }
}
