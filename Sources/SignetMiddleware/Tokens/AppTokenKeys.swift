// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import JWTKit
import SignetCore

/// The key ring as jwt-kit's key collection (an actor, filled once, asynchronously), with the
/// header checks jwt-kit leaves to its caller: it picks a key by `kid` but falls back to its
/// default for an unknown one, and does not compare the header's `alg` with the key's.
struct AppTokenKeys: Sendable {
    let ring: AppTokenKeyRing
    private let collection: Task<JWTKeyCollection, any Error>

    init(ring: AppTokenKeyRing) {
        self.ring = ring
        collection = Task {
            let keys = JWTKeyCollection()
            await keys.add(ecdsa: try ES256PrivateKey(backing: ring.signingKey), kid: JWKIdentifier(string: ring.signingKID))
            for key in ring.keys where key.kid != ring.signingKID {
                await keys.add(ecdsa: try ES256PublicKey(backing: key.publicKey), kid: JWKIdentifier(string: key.kid))
            }
            return keys
        }
    }

    func sign(_ claims: AppTokenClaims) async throws -> String {
        var header = JWTHeader()
        header.typ = "JWT"
        return try await collection.value.sign(claims, kid: JWKIdentifier(string: ring.signingKID), header: header)
    }

    /// The claims of a token whose header names ES256 and a key published at `now`, and whose
    /// signature verifies under that key; `token_invalid` otherwise.
    func verify(_ token: String, now: Date) async throws -> AppTokenClaims {
        let header = try CompactJWTHeader(token)
        guard header.alg == "ES256", let kid = header.kid, ring.key(kid: kid, at: now) != nil else {
            throw SignetError(.tokenInvalid, "the token is not signed by one of this gateway's published keys")
        }
        do {
            return try await collection.value.verify(token, as: AppTokenClaims.self)
        } catch {
            throw SignetError(.tokenInvalid, "the token's signature or claims do not verify")
        }
    }
}
