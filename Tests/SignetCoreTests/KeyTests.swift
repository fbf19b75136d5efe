// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SignetCore

@Suite struct KeyTests {
    static let asymmetric = ["test-key-rsa", "test-key-rsa-pss", "test-key-ecc-p256", "test-key-ed25519"]

    @Test(arguments: asymmetric)
    func pemAndJWKFormsOfTheRFCKeysAgree(_ name: String) throws {
        let fileJWK = try JWK(json: try Vectors.data("rfc9421/keys/\(name).jwk.json"))
        let fromPEM = try Vectors.publicKey(name).jwk
        #expect(fromPEM.x == fileJWK.x)
        #expect(fromPEM.y == fileJWK.y)
        #expect(fromPEM.n == fileJWK.n)
        #expect(fromPEM.e == fileJWK.e)
        let privateJWK = try Vectors.privateKey(name).jwk
        #expect(privateJWK.d == fileJWK.d)
        #expect(privateJWK.p == fileJWK.p)
        #expect(privateJWK.q == fileJWK.q)
        // And the private JWK reads back into the same key.
        let reread = try SigningKey(jwk: fileJWK)
        #expect(reread.verificationKey.jwk == fromPEM)
    }

    /// RFC 7638 thumbprints, computed independently with Python's hashlib over the canonical JSON.
    @Test(arguments: [
        ("test-key-ed25519", "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"),
        ("test-key-ecc-p256", "ydQXMtvbsOsZyFir-Y7A8t7fKEM1gbKPvyFkdpu4fvI"),
        ("test-key-rsa", "BHj8s0GPnMEQtkaULIM-PLgEhLBbuGUQ1vMxmBWZzEo"),
    ])
    func jwkThumbprintServesAsKeyID(name: String, thumbprint: String) throws {
        #expect(try Vectors.publicKey(name).jwk.thumbprint == thumbprint)
        #expect(try JWK(json: try Vectors.data("rfc9421/keys/\(name).jwk.json")).thumbprint == thumbprint)
    }

    @Test(arguments: KeyType.allCases)
    func generatedKeysRoundTripThroughPEMAndJWK(_ type: KeyType) throws {
        let key = try SigningKey.generate(type)
        let algorithm = try #require(
            SignatureAlgorithms.standard.names.compactMap { SignatureAlgorithms.standard[$0] }.first {
                $0.keyType == type
            }
        )
        let message = Array("base".utf8)
        let signature = try algorithm.sign(message, with: key)
        var readers: [VerificationKey] = [try VerificationKey(jwk: key.jwk), key.verificationKey]
        if let pem = key.pemRepresentation {
            readers.append(try VerificationKey(pem: pem))
            readers.append(try SigningKey(pem: pem).verificationKey)
            readers.append(try VerificationKey(pem: try #require(key.verificationKey.pemRepresentation)))
            readers.append(try VerificationKey(spkiDER: try #require(key.verificationKey.spkiDER)))
        }
        for reader in readers {
            #expect(reader.type == type)
            _ = try algorithm.verify(signature, over: message, with: reader)
        }
        let reread = try SigningKey(text: key.jwk.jsonString)
        _ = try algorithm.verify(try algorithm.sign(message, with: reread), over: message, with: key.verificationKey)
    }

    @Test func rawKeyFormsAreAccepted() throws {
        let p256 = try SigningKey.generate(.p256)
        let jwk = p256.verificationKey.jwk
        let point = [0x04] + Base64.urlDecode(jwk.x!)! + Base64.urlDecode(jwk.y!)!
        #expect(try VerificationKey(p256X963: point).jwk == jwk)
        let ed = try SigningKey.generate(.ed25519).verificationKey.jwk
        #expect(try VerificationKey(ed25519Raw: Base64.urlDecode(ed.x!)!).jwk == ed)
        let secret = try SigningKey(secret: Array("065a62448fb75fce3764dcbe68f9908d".utf8))
        #expect(secret.type == .symmetric)
    }

    @Test func hmacSecretsGivenAsBase64AreDecodedBeforeUse() throws {
        let b64 = try Vectors.text("rfc9421/keys/test-shared-secret.b64")
        let key = try SigningKey(base64Secret: b64)
        let expectedJWK =
            "{\"k\":\"" + Base64.urlEncode(Base64.decode(b64.trimmingCharacters(in: .whitespacesAndNewlines))!)
            + "\",\"kty\":\"oct\"}"
        #expect(key.verificationKey.jwk.jsonString == expectedJWK)
        #expect(Base64.urlDecode(key.verificationKey.jwk.k!)!.count == 64)
    }

    @Test(arguments: [
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----",
        "{\"kty\":\"EC\",\"crv\":\"P-999\",\"x\":\"AA\",\"y\":\"AA\"}",
        "{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"AA\",\"y\":\"AA\"}",
        "{\"kty\":\"OKP\",\"crv\":\"Ed25519\"}",
        "{\"kty\":\"RSA\",\"n\":\"!!\",\"e\":\"AQAB\"}",
        "{not json",
        "not*base64*",
        "",
    ])
    func malformedKeysAreRejectedAsInvalidKey(_ text: String) {
        let error = #expect(throws: SignetError.self) { try VerificationKey(text: text) }
        #expect(error?.code == .invalidKey)
    }

    @Test func aPrivateJWKWhosePublicMembersBelongToAnotherKeyIsRejected() throws {
        var jwk = try SigningKey.generate(.p256).jwk
        let other = try SigningKey.generate(.p256).jwk
        jwk.x = other.x
        jwk.y = other.y
        let error = #expect(throws: SignetError.self) { try SigningKey(jwk: jwk) }
        #expect(error?.code == .invalidKey)
    }

    @Test func aPublicPEMCannotSign() throws {
        let error = #expect(throws: SignetError.self) {
            try SigningKey(pem: try Vectors.text("rfc9421/keys/test-key-ed25519.pub.pem"))
        }
        #expect(error?.code == .invalidKey)
    }

    @Test func keysNeverPrintTheirMaterial() throws {
        let key = try SigningKey(base64Secret: try Vectors.text("rfc9421/keys/test-shared-secret.b64"))
        #expect("\(key)" == "SigningKey(symmetric)")
        #expect("\(key.verificationKey)" == "VerificationKey(symmetric)")
    }
}
