// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Testing

@testable import SignetCore

/// Client Attestation PoPs (draft-ietf-oauth-attestation-based-client-auth-11 §5.1): the draft's
/// own PoPs verify with the key of its attestation's `cnf.jwk` at their time and audience; PoPs
/// made here verify for every algorithm; each way a PoP can be wrong is refused with its code.
@Suite struct ClientAttestationPoPTests {
    static func vectors() throws -> (key: VerificationKey, proofs: [[String: Any]]) {
        let json = try Vectors.json("client-attestation/draft-10.json")
        let jwk = try #require(json["cnfJWK"] as? [String: Any])
        let key = try VerificationKey(jwk: try JWK(json: Array(try JSONSerialization.data(withJSONObject: jwk))))
        return (key, try json.objects("proofs"))
    }

    @Test func theDraftsPoPsVerifyWithTheAttestedKey() throws {
        let (key, proofs) = try Self.vectors()
        #expect(proofs.count == 2)
        for vector in proofs {
            let iat = try #require(vector["iat"] as? Double)
            let audience = try vector.string("audience")
            let proof = try ClientAttestationPoP(
                verifying: try vector.string("proof"),
                key: key,
                audience: audience,
                now: Date(timeIntervalSince1970: iat + 10),
                lifetime: 60,
                clockSkew: 5
            )
            let jti = try vector.string("jti"), challenge = try vector.string("challenge")
            #expect(proof.jti == jti && proof.challenge == challenge)
            #expect(proof.issued == Date(timeIntervalSince1970: iat))
            // Bound to its audience, its time and its key.
            let other = audience.contains("as.") ? "https://rs.example.com" : "https://as.example.com"
            let wrongAudience = #expect(throws: SignetError.self) {
                try ClientAttestationPoP(verifying: try vector.string("proof"), key: key, audience: other, now: Date(timeIntervalSince1970: iat), lifetime: 60, clockSkew: 5)
            }
            #expect(wrongAudience?.code == .clientAttestationPoPInvalid)
            let stale = #expect(throws: SignetError.self) {
                try ClientAttestationPoP(verifying: try vector.string("proof"), key: key, audience: audience, now: Date(timeIntervalSince1970: iat + 120), lifetime: 60, clockSkew: 5)
            }
            #expect(stale?.code == .clientAttestationPoPStale)
            let early = #expect(throws: SignetError.self) {
                try ClientAttestationPoP(verifying: try vector.string("proof"), key: key, audience: audience, now: Date(timeIntervalSince1970: iat - 60), lifetime: 60, clockSkew: 5)
            }
            #expect(early?.code == .clientAttestationPoPStale)
            let stranger = try SigningKey.generate(.p256).verificationKey
            let wrongKey = #expect(throws: SignetError.self) {
                try ClientAttestationPoP(verifying: try vector.string("proof"), key: stranger, audience: audience, now: Date(timeIntervalSince1970: iat), lifetime: 60, clockSkew: 5)
            }
            #expect(wrongKey?.code == .clientAttestationPoPInvalid)
        }
    }

    @Test(arguments: [KeyType.p256, .p384, .ed25519])
    func proofsMadeHereVerify(type: KeyType) throws {
        let key = try SigningKey.generate(type)
        let now = Date()
        let text = try ClientAttestationPoP.make(key: key, audience: "https://api.example.com", challenge: "c1", now: now, jti: "j1")
        let proof = try ClientAttestationPoP(verifying: text, key: key.verificationKey, audience: "https://api.example.com", now: now, lifetime: 60, clockSkew: 5)
        #expect(proof.jti == "j1" && proof.challenge == "c1")
    }

    @Test func everyForgedHeaderOrClaimIsRefused() throws {
        let key = try SigningKey.generate(.p256)
        let now = Date()
        let (alg, sign) = try CompactJWS.signer(for: key)
        func made(_ header: [String: Any], _ claims: [String: Any]) throws -> String {
            let input = Base64.urlEncode(Array(try JSONSerialization.data(withJSONObject: header))) + "."
                + Base64.urlEncode(Array(try JSONSerialization.data(withJSONObject: claims)))
            return input + "." + Base64.urlEncode(try sign(Array(input.utf8)))
        }
        let header: [String: Any] = ["typ": ClientAttestationPoP.type, "alg": alg]
        let claims: [String: Any] = ["aud": "https://api.example.com", "jti": "j", "iat": Int(now.timeIntervalSince1970)]
        func check(_ text: String) throws {
            _ = try ClientAttestationPoP(verifying: text, key: key.verificationKey, audience: "https://api.example.com", now: now, lifetime: 60, clockSkew: 5)
        }
        try check(try made(header, claims))
        // `aud` as an array naming this server is RFC 7519's other spelling.
        try check(try made(header, claims.merging(["aud": ["https://api.example.com"]]) { $1 }))
        let dpopProof = try DPoPProof.make(key: key, method: "GET", url: "https://api.example.com/", accessToken: nil, now: now)
        let forged: [(String, String)] = [
            ("a DPoP proof", dpopProof),
            ("no typ", try made(["alg": alg], claims)),
            ("an attestation's typ", try made(header.merging(["typ": "oauth-client-attestation+jwt"]) { $1 }, claims)),
            ("alg none", try made(header.merging(["alg": "none"]) { $1 }, claims)),
            ("an Ed25519 alg for a P-256 key", try made(header.merging(["alg": "EdDSA"]) { $1 }, claims)),
            ("crit", try made(header.merging(["crit": ["x"]]) { $1 }, claims)),
            ("no aud", try made(header, claims.filter { $0.key != "aud" })),
            ("another aud", try made(header, claims.merging(["aud": "https://api.example.com/"]) { $1 })),
            ("no jti", try made(header, claims.filter { $0.key != "jti" })),
            ("an oversized jti", try made(header, claims.merging(["jti": String(repeating: "j", count: 129)]) { $1 })),
            ("no iat", try made(header, claims.filter { $0.key != "iat" })),
            ("an iat past any real time", try made(header, claims.merging(["iat": 1e300]) { $1 })),
            ("two audiences", try made(header, claims.merging(["aud": ["https://api.example.com", "https://as.example.com"]]) { $1 })),
            ("an exp past any real time", try made(header, claims.merging(["exp": 1e300]) { $1 })),
            ("a string iat", try made(header, claims.merging(["iat": "now"]) { $1 })),
            ("two parts", "a.b"),
            ("an empty signature", try made(header, claims).split(separator: ".").prefix(2).joined(separator: ".") + "."),
            ("too long", String(repeating: "a", count: ClientAttestationPoP.maximumBytes + 1)),
        ]
        for (name, text) in forged {
            let error = #expect(throws: SignetError.self, "\(name)") { try check(text) }
            #expect(error?.code == .clientAttestationPoPInvalid, "\(name): \(String(describing: error))")
        }
        // An `exp` passed or an `nbf` to come holds too (RFC 7519).
        let when = Int(now.timeIntervalSince1970)
        for (name, extra) in [("exp passed", ["exp": when - 60]), ("nbf to come", ["nbf": when + 60])] {
            let error = #expect(throws: SignetError.self, "\(name)") { try check(try made(header, claims.merging(extra) { $1 })) }
            #expect(error?.code == .clientAttestationPoPStale, "\(name)")
        }
        try check(try made(header, claims.merging(["exp": when + 60, "nbf": when - 60]) { $1 }))
    }
}
