// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SignetCore

/// Every signed example of RFC 9421 (Appendix B and §2.4, 2.5, 3.2, 4.3), run whole.
@Suite struct SignatureVectorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let id: String
        let label: String?
        let alg: String
        let keyID: String
        let messageRaw: String
        let relatedRequestRaw: String?
        let signatureInput: String?
        let signature: String?
        let signatureBase: String?
        let signatureB64: String?
        let deterministic: Bool
        let created: Int64
        var testDescription: String { id }
    }

    static func load() throws -> [Case] {
        var cases: [Case] = []
        let files = ["rfc9421/rfc9421-appendix-b.json", "rfc9421/rfc9421-body-examples.json"]
        let jsons = try files.map(Vectors.json)
        // Body examples refer to Appendix B messages too (test-request).
        let messages = try jsons.reduce(into: [String: Any]()) { $0.merge(try $1.object("messages")) { a, _ in a } }
        for json in jsons {
            for vector in try json.objects("cases") {
                let message = try (messages[try vector.string("message")] as? [String: Any]).orThrow().string("raw")
                let related = try (vector["related_request"] as? String).map {
                    try (messages[$0] as? [String: Any]).orThrow().string("raw")
                }
                let params = vector["params"] as? [String: Any]
                cases.append(
                    Case(
                        id: try vector.string("id"),
                        label: vector["label"] as? String,
                        alg: try vector.string("alg"),
                        keyID: try vector.string("keyid"),
                        messageRaw: message,
                        relatedRequestRaw: related,
                        signatureInput: vector["signature_input_header"] as? String,
                        signature: vector["signature_header"] as? String,
                        signatureBase: vector["signature_base"] as? String,
                        signatureB64: vector["signature_b64"] as? String,
                        deterministic: vector["deterministic"] as? Bool ?? false,
                        created: (params?["created"] as? NSNumber)?.int64Value ?? 0
                    )
                )
            }
        }
        return cases
    }

    static let all: [Case] = (try? load()) ?? []
    static let signed = all.filter { $0.signatureB64 != nil }

    /// The message with the vector's own `Signature-Input` and `Signature` (replacing any it had).
    static func signedMessage(_ vector: Case) throws -> HTTPMessage {
        var message = try Vectors.message(vector.messageRaw)
        if let input = vector.signatureInput, let signature = vector.signature {
            message.fields.removeAll("signature-input")
            message.fields.removeAll("signature")
            message.fields.append(name: "Signature-Input", value: input)
            message.fields.append(name: "Signature", value: signature)
        }
        return message
    }

    static func verifier(label: String) throws -> MessageVerifier {
        var policy = VerificationPolicy.permissive
        policy.selection = .label(label)
        return MessageVerifier(keys: try Vectors.keyRing(), policy: policy, nonces: nil)
    }

    @Test func everyCaseIsLoaded() throws {
        #expect(try Self.load().count == Self.all.count)
        // 8 Appendix B cases + 7 in the body examples (2.4 ×2, 2.4 request, 2.5, 3.2, 4.3 ×2).
        #expect(Self.all.count == 15)
        #expect(Self.signed.count == 14)
    }

    /// A vector file that failed to load would make the tables below run no case at all.
    @Test func everySignedCaseIsLoaded() {
        #expect(Self.signed.count == 14)
    }

    @Test(arguments: all.filter { $0.signatureBase != nil })
    func signatureBaseIsByteExact(_ vector: Case) throws {
        let message = try Self.signedMessage(vector)
        let related = try vector.relatedRequestRaw.map { try Vectors.message($0) }
        let parameters: SignatureParameters
        if vector.signatureInput != nil {
            let entries = try SignatureFields(message.fields).entries
            parameters = try #require(entries.first { $0.label == vector.label }).parameters
        } else {
            // §2.5 prints a base with no signature: build its parameters from the case.
            let expected = try #require(vector.signatureBase)
            let paramsLine = try #require(expected.split(separator: "\n").last)
            let value = String(paramsLine.dropFirst("\"@signature-params\": ".count))
            let fields: MessageFields = [("Signature-Input", "x=" + value), ("Signature", "x=:AA==:")]
            parameters = try #require(try SignatureFields(fields).entries.first).parameters
        }
        let base = try SignatureBase(message: message, parameters: parameters, relatedRequest: related)
        #expect(base.text == vector.signatureBase)
    }

    @Test(arguments: signed)
    func signatureVerifiesWithThePEMKey(_ vector: Case) async throws {
        let message = try Self.signedMessage(vector)
        let related = try vector.relatedRequestRaw.map { try Vectors.message($0) }
        let verified = try await Self.verifier(label: try #require(vector.label))
            .verify(message, relatedRequest: related, now: Date(timeIntervalSince1970: TimeInterval(vector.created)))
        #expect(verified.keyID == vector.keyID)
        #expect(verified.algorithm == vector.alg)
        if let base = vector.signatureBase { #expect(verified.signatureBase == base) }
    }

    @Test(arguments: signed)
    func signatureVerifiesWithTheJWKKey(_ vector: Case) async throws {
        guard vector.keyID != "test-shared-secret" else { return }
        let jwk = try JWK(json: try Vectors.data("rfc9421/keys/\(vector.keyID).jwk.json"))
        let ring = KeyRing([KeyRecord(keyID: vector.keyID, algorithm: vector.alg, key: try VerificationKey(jwk: jwk))])
        var policy = VerificationPolicy.permissive
        policy.selection = .label(try #require(vector.label))
        let related = try vector.relatedRequestRaw.map { try Vectors.message($0) }
        _ = try await MessageVerifier(keys: ring, policy: policy, nonces: nil)
            .verify(
                try Self.signedMessage(vector),
                relatedRequest: related,
                now: Date(timeIntervalSince1970: 1_618_884_480)
            )
    }

    @Test(arguments: signed)
    func aOneByteChangeToTheSignatureIsRejected(_ vector: Case) async throws {
        var message = try Self.signedMessage(vector)
        let label = try #require(vector.label)
        let signatureB64 = try #require(vector.signatureB64)
        var signature = try #require(Base64.decode(signatureB64))
        signature[signature.count / 2] ^= 0x01
        let others = message.fields.values("signature").filter { !$0.hasPrefix(label + "=") }
        message.fields.removeAll("signature")
        for other in others { message.fields.append(name: "Signature", value: other) }
        message.fields.append(name: "Signature", value: "\(label)=:\(Base64.encode(signature)):")
        let related = try vector.relatedRequestRaw.map { try Vectors.message($0) }
        let error = await #expect(throws: SignetError.self) {
            try await Self.verifier(label: label).verify(
                message,
                relatedRequest: related,
                now: Date(timeIntervalSince1970: TimeInterval(vector.created))
            )
        }
        #expect(error?.code == .signatureInvalid)
        #expect(error?.signatureBase != nil)
    }

    @Test(arguments: signed.filter(\.deterministic))
    func deterministicSignaturesAreReproducedByteForByte(_ vector: Case) throws {
        let message = try Self.signedMessage(vector)
        let entries = try SignatureFields(message.fields).entries
        let entry = try #require(entries.first { $0.label == vector.label })
        let base = try SignatureBase(message: message, parameters: entry.parameters)
        let algorithm = try SignatureAlgorithms.standard.require(vector.alg)
        let signature = try algorithm.sign(base.bytes, with: try Vectors.privateKey(vector.keyID))
        #expect(Base64.encode(signature) == vector.signatureB64)
    }

    @Test func b4TransformationsVerifyExactlyAsTheRFCSays() async throws {
        let json = try Vectors.json("rfc9421/rfc9421-appendix-b.json")
        let b4 = try #require(try json.objects("cases").first { $0["id"] as? String == "B.4" })
        let variants = try b4.objects("transformed_variants")
        #expect(variants.count == 5)
        for variant in variants {
            let message = try Vectors.message(try variant.object("message").string("raw"))
            let expectValid = try #require(variant["expect_valid"] as? Bool)
            let result: Result<VerifiedSignature, any Error>
            do {
                result = .success(
                    try await Self.verifier(label: "transform").verify(
                        message,
                        now: Date(timeIntervalSince1970: 1_618_884_473)
                    )
                )
            } catch {
                result = .failure(error)
            }
            switch (expectValid, result) {
            case (true, .success), (false, .failure(SignetError.signatureInvalid)): break
            default: Issue.record("B.4 variant (\(variant["why"] ?? "")): expected valid=\(expectValid), got \(result)")
            }
        }
    }

    @Test func theClientSignatureOfSection4_3FailsAfterTheProxyRewroteHost() async throws {
        let json = try Vectors.json("rfc9421/rfc9421-body-examples.json")
        let forwarded = try Vectors.message(try json.object("messages").object("s4.3-forwarded").string("raw"))
        let error = await #expect(throws: SignetError.self) {
            try await Self.verifier(label: "sig1").verify(forwarded, now: Date(timeIntervalSince1970: 1_618_884_480))
        }
        #expect(error?.code == .signatureInvalid)
        // While the proxy's own signature over the same message verifies.
        let final = try Vectors.message(try json.object("messages").object("s4.3-final").string("raw"))
        let verified = try await Self.verifier(label: "proxy_sig").verify(
            final,
            now: Date(timeIntervalSince1970: 1_618_884_480)
        )
        #expect(verified.keyID == "test-key-rsa")
    }

    @Test func signingAndVerifyingRoundTripsForEveryAlgorithm() async throws {
        for (keyID, alg) in Vectors.algorithmOfKey {
            let request = try Vectors.message(Self.all[0].messageRaw)
            let signer = MessageSigner(
                key: try Vectors.privateKey(keyID),
                keyID: keyID,
                algorithm: try SignatureAlgorithms.standard.require(alg)
            )
            let signed = try signer.sign(
                request,
                components: [.method, .targetURI, .contentDigest, "content-type"],
                created: Date(timeIntervalSince1970: 1_700_000_000),
                nonce: "n-\(keyID)"
            )
            let verifier = MessageVerifier(keys: try Vectors.keyRing(), nonces: MemoryNonceStore())
            let verified = try await verifier.verify(signed, now: Date(timeIntervalSince1970: 1_700_000_010))
            #expect(verified.algorithm == alg)
            #expect(verified.nonce == "n-\(keyID)")
        }
    }
}

extension SignetError {
    /// Lets `catch SignetError.signatureInvalid` style patterns match on the code.
    static let signatureInvalid = SignetError(.signatureInvalid, "")
    static func ~= (pattern: SignetError, value: any Error) -> Bool {
        (value as? SignetError)?.code == pattern.code
    }
}

extension Optional {
    func orThrow() throws -> Wrapped {
        guard let self else { throw VectorError("missing value") }
        return self
    }
}
