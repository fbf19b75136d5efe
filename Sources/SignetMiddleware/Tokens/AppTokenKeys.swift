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

    /// `claims` signed with the current key, under the JWT type `typ` (`JWT` for app tokens,
    /// `oauth-client-attestation+jwt` for client attestations).
    func sign(_ claims: some JWTPayload, typ: String = "JWT") async throws -> String {
        var header = JWTHeader()
        header.typ = typ
        return try await collection.value.sign(claims, kid: JWKIdentifier(string: ring.signingKID), header: header)
    }

    /// The claims of a token whose header names ES256 and a key published at `now`, and whose
    /// signature verifies under that key; `token_invalid` otherwise.
    func verify(_ token: String, now: Date) async throws -> AppTokenClaims {
        try await verify(token, as: AppTokenClaims.self, type: nil, now: now, refusing: .tokenInvalid, "token")
    }

    /// The claims of a JWT of this ring's (ES256, a key published at `now`, the signature) whose
    /// `typ` is `type` (JWT or none when `nil`), or `code` naming it as `what`.
    func verify<Claims: JWTPayload>(
        _ token: String,
        as: Claims.Type,
        type: String?,
        now: Date,
        refusing code: SignetError.Code,
        _ what: String
    ) async throws -> Claims {
        let header = try CompactJWTHeader(token, type: type, refusing: code, what)
        guard header.alg == "ES256", let kid = header.kid, ring.key(kid: kid, at: now) != nil else {
            throw SignetError(code, "the \(what) is not signed by one of this gateway's published keys")
        }
        do {
            return try await collection.value.verify(token, as: Claims.self)
        } catch {
            throw SignetError(code, "the \(what)'s signature or claims do not verify")
        }
    }
}
