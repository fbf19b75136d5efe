// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetTestSupport
import SignetTrust
import Testing

/// Trust documents signed and verified, every refusal with its reason, and both directions against
/// PyJWT, a JOSE implementation Signet did not write.
@Suite struct TrustDocumentTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func document(version: Int = 2, issued: Date = now, expires: Date = now.addingTimeInterval(86_400)) -> TrustDocument {
        TrustDocument(
            issuer: "scores-trust",
            issuedAt: issued,
            expires: expires,
            version: version,
            pinSets: [
                PinSetClaim(
                    host: "api.example.com",
                    pins: ["sha256/" + Base64.encode([UInt8](repeating: 1, count: 32)), "sha256/" + Base64.encode([UInt8](repeating: 2, count: 32))],
                    softExpiry: now.addingTimeInterval(30 * 86_400)
                )
            ],
            ohttpKeys: [OHTTPGatewayKey(keyID: 1, privateKey: .x25519(.init())).configuration]
        )
    }

    static func keys(_ named: [String: SigningKey]) async throws -> TrustKeys {
        try await TrustKeys(publicKeys: named.mapValues { $0.verificationKey.pemRepresentation! })
    }

    @Test(arguments: [KeyType.p256, .ed25519])
    func signedDocumentsVerifyUnderAnyCompiledInKey(_ type: KeyType) async throws {
        let current = try SigningKey.generate(type)
        let next = try SigningKey.generate(type == .p256 ? .ed25519 : .p256)
        let trusted = try await Self.keys(["trust-1": current, "trust-2": next])
        let document = Self.document()
        for (kid, key) in [("trust-1", current), ("trust-2", next)] {
            let jws = try await TrustSigner(key: key, kid: kid).sign(document)
            let verified = try await trusted.verify(jws, now: Self.now)
            #expect(verified == document)
            #expect(try verified.pinSetValues().first?.pattern.description == "api.example.com")
            #expect(try verified.ohttpKeyConfigurations().count == 1)
        }
    }

    @Test func everyWrongDocumentIsRefusedWithItsReason() async throws {
        let key = try SigningKey.generate(.p256)
        let trusted = try await Self.keys(["trust-1": key])
        let good = try await TrustSigner(key: key, kid: "trust-1").sign(Self.document())
        func reason(_ jws: String) async -> String? {
            do {
                _ = try await trusted.verify(jws, now: Self.now)
                return nil
            } catch let error as SignetError {
                return error.code.rawValue
            } catch {
                return "\(error)"
            }
        }
        #expect(await reason(good) == nil)
        let stranger = try await TrustSigner(key: try SigningKey.generate(.p256), kid: "trust-1").sign(Self.document())
        #expect(await reason(stranger) == "trust_document_invalid", "signed by another key")
        let expired = try await TrustSigner(key: key, kid: "trust-1").sign(Self.document(expires: Self.now.addingTimeInterval(-1)))
        #expect(await reason(expired) == "trust_document_expired")

        let parts = good.split(separator: ".").map(String.init)
        #expect(await reason(String(good.dropLast(5))) == "trust_document_invalid", "truncated")
        #expect(await reason(parts[0] + "." + parts[1]) == "trust_document_invalid", "no signature")
        // The payload altered: version 2 → 9.
        let payload = String(decoding: Base64.urlDecode(parts[1])!, as: UTF8.self).replacingOccurrences(of: "\"version\":2", with: "\"version\":9")
        #expect(payload.contains("\"version\":9"))
        #expect(await reason(parts[0] + "." + Base64.urlEncode(Array(payload.utf8)) + "." + parts[2]) == "trust_document_invalid")

        // alg: none, and HS256 keyed with the public trust key (the classic confusion).
        let none = Base64.urlEncode(Array(#"{"alg":"none","kid":"trust-1"}"#.utf8))
        #expect(await reason(none + "." + parts[1] + ".") == "trust_document_invalid")
        let hsHeader = Base64.urlEncode(Array(#"{"alg":"HS256","kid":"trust-1","typ":"JWT"}"#.utf8))
        let publicPEM = Array(key.verificationKey.pemRepresentation!.utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: Array((hsHeader + "." + parts[1]).utf8), using: SymmetricKey(data: publicPEM))
        #expect(await reason(hsHeader + "." + parts[1] + "." + Base64.urlEncode(mac)) == "trust_document_invalid")
        // An EdDSA header over an ES256 signature.
        let edHeader = Base64.urlEncode(Array(#"{"alg":"EdDSA","kid":"trust-1"}"#.utf8))
        #expect(await reason(edHeader + "." + parts[1] + "." + parts[2]) == "trust_document_invalid")
    }

    /// Issue 25: a JWS whose header said `EdDSA` but whose signature was the P-256 trust key's own
    /// verified (jwt-kit takes the key the `kid` names and ignores `alg`), and the reverse. RFC 8725
    /// §3.1: the header's algorithm must be the key's.
    @Test(arguments: [(KeyType.p256, "EdDSA"), (.ed25519, "ES256")])
    func aHeaderNamingAnotherAlgorithmThanItsKeysIsRefused(_ type: KeyType, _ claimed: String) async throws {
        let key = try SigningKey.generate(type)
        let trusted = try await Self.keys(["trust-1": key])
        let document = Self.document()
        let honest = try await TrustSigner(key: key, kid: "trust-1").sign(document)
        #expect(try await trusted.verify(honest, now: Self.now) == document)
        let payload = honest.split(separator: ".")[1]
        for kid in [#","kid":"trust-1""#, ""] {
            let header = Base64.urlEncode(Array(#"{"alg":"\#(claimed)"\#(kid),"typ":"JWT"}"#.utf8))
            let input = Array((header + "." + payload).utf8)
            // The key's own algorithm, under a header naming the other: ECDSA P-256 (raw r‖s) or Ed25519.
            let signature = try type == .p256 ? ECDSAP256SHA256().sign(input, with: key) : Ed25519Algorithm().sign(input, with: key)
            let lying = header + "." + payload + "." + Base64.urlEncode(signature)
            let error = await #expect(throws: SignetError.self) { try await trusted.verify(lying, now: Self.now) }
            #expect(error?.code == .trustDocumentInvalid, "\(claimed) header with kid \(kid.isEmpty ? "absent" : "present")")
        }
    }

    /// PyJWT verifies what `TrustSigner` signs, and Signet verifies what PyJWT signs.
    @Test(.enabled(if: PythonPeer.available("jwt, cryptography")), arguments: [KeyType.p256, .ed25519])
    func pyJWTAgreesBothWays(_ type: KeyType) async throws {
        let folder = try SignetProcess.temporaryDirectory()
        let key = try SigningKey.generate(type)
        let privateFile = folder.appendingPathComponent("trust.key.pem")
        let publicFile = folder.appendingPathComponent("trust.pub.pem")
        try Data(key.pemRepresentation!.utf8).write(to: privateFile)
        try Data(key.verificationKey.pemRepresentation!.utf8).write(to: publicFile)
        // Whole seconds, as NumericDates travel through Python's JSON unchanged.
        let issued = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let live = Self.document(issued: issued, expires: issued.addingTimeInterval(3600))

        let jws = try await TrustSigner(key: key, kid: "trust-1").sign(live)
        let claims = try #require(
            try JSONSerialization.jsonObject(with: Data(try await PythonPeer.run("jose_peer.py", ["verify", publicFile.path, jws]).utf8)) as? [String: Any]
        )
        #expect(claims["version"] as? Int == 2 && claims["iss"] as? String == "scores-trust")
        #expect((claims["pinSets"] as? [[String: Any]])?.first?["host"] as? String == "api.example.com")

        let claimsFile = folder.appendingPathComponent("claims.json")
        try JSONEncoder.trustClaims.encode(live).write(to: claimsFile)
        let signedByPython = try await PythonPeer.run("jose_peer.py", ["sign", privateFile.path, "trust-1", claimsFile.path])
        let verified = try await Self.keys(["trust-1": key]).verify(signedByPython, now: issued)
        #expect(verified == live)
    }
}

extension JSONEncoder {
    /// Claims as JWTs carry them: dates in seconds since 1970.
    static var trustClaims: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }
}
