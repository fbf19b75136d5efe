// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Testing

@testable import SignetCore

/// DPoP proofs (RFC 9449): the RFC's own proofs verify at their time and thumbprint, proofs made
/// here verify for every algorithm offered, and each way a proof can be wrong is refused with its
/// code.
@Suite struct DPoPProofTests {
    struct Vector {
        let name, proof, method, uri, jti: String
        let iat: Double
        let accessToken: String?
    }

    static func vectors() throws -> (jkt: String, proofs: [Vector]) {
        let json = try Vectors.json("dpop/rfc9449.json")
        let proofs = try json.objects("proofs").map {
            Vector(
                name: try $0.string("name"),
                proof: try $0.string("proof"),
                method: try $0.string("method"),
                uri: try $0.string("uri"),
                jti: try $0.string("jti"),
                iat: try #require($0["iat"] as? Double),
                accessToken: $0["accessToken"] as? String
            )
        }
        return (try json.string("jkt"), proofs)
    }

    @Test func theRFCsProofsVerifyWithTheirThumbprint() throws {
        let (jkt, proofs) = try Self.vectors()
        #expect(proofs.count == 2)
        for vector in proofs {
            let proof = try DPoPProof(
                verifying: vector.proof,
                method: vector.method,
                targetURI: vector.uri,
                accessToken: vector.accessToken,
                now: Date(timeIntervalSince1970: vector.iat + 5),
                lifetime: 60,
                clockSkew: 5
            )
            #expect(proof.thumbprint == jkt, "\(vector.name)")
            #expect(proof.jti == vector.jti)
            #expect(proof.issued == Date(timeIntervalSince1970: vector.iat))
            #expect(proof.nonce == nil)
        }
    }

    @Test func theRFCsResourceProofIsBoundToItsTokenMethodURIAndTime() throws {
        let vector = try Self.vectors().proofs[1]
        let now = Date(timeIntervalSince1970: vector.iat + 5)
        func code(method: String? = nil, uri: String? = nil, token: String?? = nil, at: Date? = nil) -> String? {
            do {
                _ = try DPoPProof(
                    verifying: vector.proof,
                    method: method ?? vector.method,
                    targetURI: uri ?? vector.uri,
                    accessToken: token ?? vector.accessToken,
                    now: at ?? now,
                    lifetime: 60,
                    clockSkew: 5
                )
                return nil
            } catch {
                return (error as? SignetError)?.code.rawValue
            }
        }
        #expect(code() == nil)
        #expect(code(method: "POST") == "dpop_proof_invalid")
        #expect(code(method: "get") == "dpop_proof_invalid")
        #expect(code(uri: "https://resource.example.org/other") == "dpop_proof_invalid")
        #expect(code(uri: "http://resource.example.org/protectedresource") == "dpop_proof_invalid")
        #expect(code(uri: "https://resource.example.org:8443/protectedresource") == "dpop_proof_invalid")
        #expect(code(token: "another-token") == "dpop_proof_invalid")
        #expect(code(at: Date(timeIntervalSince1970: vector.iat + 66)) == "dpop_proof_stale")
        #expect(code(at: Date(timeIntervalSince1970: vector.iat - 6)) == "dpop_proof_stale")
        // The same URI spelled otherwise, and with a query the proof leaves out (RFC 9449 §4.3 (9)).
        #expect(code(uri: "HTTPS://Resource.Example.ORG:443/protectedresource?page=2") == nil)
        #expect(code(uri: "https://resource.example.org/%70rotectedresource") == nil)
    }

    @Test func proofsMadeHereVerifyForEveryAlgorithm() throws {
        let now = Date()
        for type in [KeyType.p256, .p384, .ed25519, .rsa] {
            let key = try SigningKey.generate(type)
            let text = try DPoPProof.make(
                key: key,
                method: "POST",
                url: "https://api.example.com/scores?x=1#top",
                accessToken: "token-1",
                nonce: "n-1",
                now: now,
                jti: "jti-\(type.rawValue)"
            )
            let proof = try DPoPProof(
                verifying: text,
                method: "POST",
                targetURI: "https://api.example.com/scores",
                accessToken: "token-1",
                now: now,
                lifetime: 60,
                clockSkew: 5
            )
            #expect(proof.thumbprint == (try key.verificationKey.jwk.thumbprint))
            #expect(proof.nonce == "n-1")
            #expect(proof.jti == "jti-\(type.rawValue)")
        }
        #expect(throws: SignetError.self) { try DPoPProof.make(key: try SigningKey(secret: Array(repeating: 1, count: 32)), method: "GET", url: "https://a/", accessToken: nil, now: now) }
    }

    /// A proof whose header or claims say what a forger would want, each signed by the key its
    /// header carries (so only the check named fails).
    @Test func everyForgedHeaderIsRefused() throws {
        let key = try SigningKey.generate(.p256)
        let now = Date()
        var publicJWK = key.verificationKey.jwk
        func forged(header: [String: Any], claims: [String: Any]? = nil, signWith: SigningKey? = nil) throws -> String {
            let claims = claims ?? ["jti": "j", "htm": "GET", "htu": "https://api.example.com/a", "iat": Int(now.timeIntervalSince1970)]
            let input = Base64.urlEncode(try JSONSerialization.data(withJSONObject: header)) + "."
                + Base64.urlEncode(try JSONSerialization.data(withJSONObject: claims))
            return input + "." + Base64.urlEncode(try ECDSAP256SHA256().sign(Array(input.utf8), with: signWith ?? key))
        }
        func reason(_ proof: String) -> String? {
            do {
                _ = try DPoPProof(verifying: proof, method: "GET", targetURI: "https://api.example.com/a", accessToken: nil, now: now, lifetime: 60, clockSkew: 5)
                return nil
            } catch { return (error as? SignetError)?.code.rawValue }
        }
        let jwk = try JSONSerialization.jsonObject(with: Data(publicJWK.jsonString.utf8))
        #expect(reason(try forged(header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk])) == nil)
        #expect(reason(try forged(header: ["typ": "JWT", "alg": "ES256", "jwk": jwk])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: ["alg": "ES256", "jwk": jwk])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: ["typ": "dpop+jwt", "alg": "HS256", "jwk": jwk])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: ["typ": "dpop+jwt", "alg": "none", "jwk": jwk])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: ["typ": "dpop+jwt", "alg": "EdDSA", "jwk": jwk])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: ["typ": "dpop+jwt", "alg": "ES256"])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk, "crit": ["exp"]])) == "dpop_proof_invalid")
        // The private key in the header: refused, though the signature is good.
        let privateJWK = try JSONSerialization.jsonObject(with: Data(key.jwk.jsonString.utf8))
        #expect(reason(try forged(header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": privateJWK])) == "dpop_proof_invalid")
        // Another key's signature under this key's jwk.
        #expect(reason(try forged(header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk], signWith: try SigningKey.generate(.p256))) == "dpop_proof_invalid")
        // A point off the curve.
        publicJWK.y = publicJWK.x
        let offCurve = try JSONSerialization.jsonObject(with: Data(publicJWK.jsonString.utf8))
        #expect(reason(try forged(header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": offCurve])) == "dpop_proof_invalid")
        // Claims: missing, of the wrong type, an oversized jti.
        let header: [String: Any] = ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk]
        let iat = Int(now.timeIntervalSince1970)
        #expect(reason(try forged(header: header, claims: ["htm": "GET", "htu": "https://api.example.com/a", "iat": iat])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: header, claims: ["jti": "j", "htu": "https://api.example.com/a", "iat": iat])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: header, claims: ["jti": "j", "htm": "GET", "iat": iat])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: header, claims: ["jti": "j", "htm": "GET", "htu": "https://api.example.com/a"])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: header, claims: ["jti": "j", "htm": "GET", "htu": "https://api.example.com/a", "iat": "\(iat)"])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: header, claims: ["jti": String(repeating: "j", count: 129), "htm": "GET", "htu": "https://api.example.com/a", "iat": iat])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: header, claims: ["jti": "j", "htm": "GET", "htu": "ftp://api.example.com/a", "iat": iat])) == "dpop_proof_invalid")
        #expect(reason(try forged(header: header, claims: ["jti": "j", "htm": "GET", "htu": "https://user@api.example.com/a", "iat": iat])) == "dpop_proof_invalid")
        // No access token came with it, so no ath is asked for; but a token makes it required.
        let bare = try forged(header: header)
        #expect(reason(bare) == nil)
        #expect(throws: SignetError.self) {
            try DPoPProof(verifying: bare, method: "GET", targetURI: "https://api.example.com/a", accessToken: "t", now: now, lifetime: 60, clockSkew: 5)
        }
        // Not a JWS at all, or too long.
        for text in ["", "a.b", "a.b.c.d", "e30.e30.", String(repeating: "A", count: 9000) + ".e30.AAAA"] {
            #expect(reason(text) == "dpop_proof_invalid", "\(text.prefix(20))")
        }
    }

    @Test func aSmallOrderEd25519KeyIsRefused() throws {
        // The identity point (order 1): every signature would verify under some implementations.
        var jwk = JWK(kty: "OKP")
        jwk.crv = "Ed25519"
        jwk.x = Base64.urlEncode([1] + Array(repeating: 0, count: 31))
        let header = Base64.urlEncode(Array(#"{"typ":"dpop+jwt","alg":"EdDSA","jwk":\#(jwk.jsonString)}"#.utf8))
        let claims = Base64.urlEncode(Array(#"{"jti":"j","htm":"GET","htu":"https://a.example/","iat":\#(Int(Date().timeIntervalSince1970))}"#.utf8))
        let proof = header + "." + claims + "." + Base64.urlEncode(Array(repeating: 0, count: 64))
        #expect(throws: SignetError(.dpopProofInvalid, "")) {
            try DPoPProof(verifying: proof, method: "GET", targetURI: "https://a.example/", accessToken: nil, now: Date(), lifetime: 60, clockSkew: 5)
        }
    }

    /// A signed proof whose `iat` is past any real time is refused, not turned into an integer (which
    /// would stop the process).
    @Test func anIatPastAnyRealTimeIsRefused() throws {
        let key = try SigningKey.generate(.p256)
        let (alg, sign) = try CompactJWS.signer(for: key)
        let header = #"{"typ":"dpop+jwt","alg":"\#(alg)","jwk":\#(key.verificationKey.jwk.jsonString)}"#
        for iat in ["1e300", "-1e300", "100000000000"] {
            let claims = #"{"jti":"j","htm":"GET","htu":"https://api.example.com/a","iat":\#(iat)}"#
            let input = Base64.urlEncode(Array(header.utf8)) + "." + Base64.urlEncode(Array(claims.utf8))
            let proof = input + "." + Base64.urlEncode(try sign(Array(input.utf8)))
            let error = #expect(throws: SignetError.self, "\(iat)") {
                try DPoPProof(verifying: proof, method: "GET", targetURI: "https://api.example.com/a", accessToken: nil, now: Date(), lifetime: 60, clockSkew: 5)
            }
            #expect(error?.code == .dpopProofInvalid, "\(iat)")
        }
    }

    @Test func nonceIsTheServersAndExpires() throws {
        let secret = SymmetricKey(size: .bits256)
        let now = Date()
        let nonce = ServerNonce.mint(.dpop, secret: secret, now: now)
        #expect(ServerNonce.isCurrent(nonce.value, .dpop, secret: secret, lifetime: 300, clockSkew: 5, now: now.addingTimeInterval(299)))
        #expect(!ServerNonce.isCurrent(nonce.value, .dpop, secret: secret, lifetime: 300, clockSkew: 5, now: now.addingTimeInterval(301)))
        #expect(!ServerNonce.isCurrent(nonce.value, .dpop, secret: secret, lifetime: 300, clockSkew: 5, now: now.addingTimeInterval(-6)))
        #expect(!ServerNonce.isCurrent(nonce.value, .dpop, secret: SymmetricKey(size: .bits256), lifetime: 300, clockSkew: 5, now: now))
        // A registration challenge under the same secret is not a nonce (another MAC context).
        let challenge = RegistrationChallenge.mint(secret: secret, now: now)
        #expect(!ServerNonce.isCurrent(challenge.value, .dpop, secret: secret, lifetime: 300, clockSkew: 5, now: now))
        // Nor is a client attestation challenge (each purpose MACs its own context).
        let attestationChallenge = ServerNonce.mint(.clientAttestationChallenge, secret: secret, now: now)
        #expect(!ServerNonce.isCurrent(attestationChallenge.value, .dpop, secret: secret, lifetime: 300, clockSkew: 5, now: now))
        #expect(ServerNonce.isCurrent(attestationChallenge.value, .clientAttestationChallenge, secret: secret, lifetime: 300, clockSkew: 5, now: now))
        #expect(abs((ServerNonce.issued(verifying: nonce.value, .dpop, secret: secret, lifetime: 300, clockSkew: 5, now: now) ?? .distantPast).timeIntervalSince(now)) < 0.01)
    }
}
