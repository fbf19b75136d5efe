// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

extension FuzzTarget {
    /// Client Attestation PoPs (draft-ietf-oauth-attestation-based-client-auth-11) as the gateway
    /// reads them from `OAuth-Client-Attestation-PoP`, checked with the draft's attested key at the
    /// draft's time.
    static let clientAttestationPoP = FuzzTarget(
        "client-attestation-pop",
        property: "a PoP taken is taken again the same, and never for another audience, by another key, or after its window",
        seeds: { vectors in
            let proofs = try vectors.object("client-attestation/draft-10.json")["proofs"] as? [[String: Any]] ?? []
            return proofs.compactMap { ($0["proof"] as? String).map { Array($0.utf8) } }
        },
        check: { bytes in
            guard let text = text(bytes) else { return }
            // Parsed for each input: a key made once, lazily, during the first input reads as a
            // leak to LeakSanitizer.
            let attested = try VerificationKey(jwk: JWK(json: Array(Self.attestedJWK.utf8)))
            let stranger = try VerificationKey(jwk: JWK(json: Array(Self.strangerJWK.utf8)))
            func verify(
                audience: String = "https://as.example.com",
                key: VerificationKey? = nil,
                at now: Date = Date(timeIntervalSince1970: 1_772_487_600)
            ) throws -> ClientAttestationPoP {
                try ClientAttestationPoP(verifying: text, key: key ?? attested, audience: audience, now: now, lifetime: 60, clockSkew: 5)
            }
            guard let proof = try? verify() else { return }
            let again = try verify()
            try expect(again.jti == proof.jti && again.issued == proof.issued && again.challenge == proof.challenge, "a PoP read twice reads differently")
            try expect(!proof.jti.isEmpty && proof.jti.utf8.count <= ClientAttestationPoP.maximumJTIBytes, "a PoP with an unbounded jti was taken")
            try expect((try? verify(audience: "https://rs.example.org")) == nil, "a PoP was taken for another audience")
            try expect((try? verify(key: stranger)) == nil, "a PoP was taken with another key")
            try expect((try? verify(at: proof.issued.addingTimeInterval(120))) == nil, "a PoP was taken after its window")
        }
    )

    /// The draft's attestation's `cnf.jwk`.
    static let attestedJWK = #"{"kty":"EC","crv":"P-256","x":"VcKVNBZ4IaBAYW3jxM4w3TJFVA7myeUGQyGt-g_yvpQ","y":"f-E-hYE3TAWKwhVv9pej9NABs9SX9XsNO80x57jFTyU"}"#
    /// Another P-256 key: RFC 9449's example DPoP key.
    static let strangerJWK = #"{"kty":"EC","crv":"P-256","x":"l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs","y":"9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"}"#
}
