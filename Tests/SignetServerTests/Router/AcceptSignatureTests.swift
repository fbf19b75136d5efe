// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// `Accept-Signature` (RFC 9421 §5.1) on the refusals a client can put right by signing otherwise:
/// a missing signature (from the head, before a body is read, or at the gate) and one that does
/// not cover what the policy asks (`policy.coveredFields`). Signing as it says is then accepted.
@Suite(.awaitsCleanups) struct AcceptSignatureTests {
    static func asked(_ answer: GatewayHarness.Answer) throws -> SignatureRequest {
        let field = try #require(answer.headers["Accept-Signature"].first, "no Accept-Signature: \(answer.headers)")
        return try #require(try SignatureRequest.parse(field).first)
    }

    @Test func aMissingSignatureIsToldWhatToSign() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let get = try await GatewayHarness.send(method: "GET", url: harness.base + "/scores")
        #expect(get.status == 401 && get.reason == "signature_missing", "\(get.text)")
        #expect(get.headers["WWW-Authenticate"].first == "Signature")
        let forGet = try Self.asked(get)
        #expect(forGet.components.contains(.method) && forGet.components.contains(.targetURI))
        #expect(!forGet.components.contains(.contentDigest) && forGet.created && forGet.nonce)

        // A body: refused from the head, unread, and told to cover its digest and type.
        let post = try await GatewayHarness.send(
            method: "POST", url: harness.base + "/scores", headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        #expect(post.status == 401 && post.reason == "signature_missing", "\(post.text)")
        let forPost = try Self.asked(post)
        #expect(forPost.components.contains(.contentDigest) && forPost.components.contains("content-type"))
        // Other refusals carry none: a bad signature is not put right by signing otherwise.
        let device = try await harness.register(.ed25519)
        let stranger = GatewayHarness.Device(key: try SigningKey.generate(.ed25519), keyID: device.keyID, deviceID: device.deviceID, algorithm: Ed25519Algorithm())
        let forged = try await GatewayHarness.send(
            try stranger.signer.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/scores"), created: Date(), nonce: Nonce.random()))
        #expect(forged.reason == "signature_invalid" && forged.headers["Accept-Signature"].isEmpty)
    }

    @Test func aSignatureThatDoesNotCoverWhatThePolicyAsksIsToldWhatToAdd() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.policy.coveredFields = ["x-app-version"] }
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let request = try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/x", fields: [("X-App-Version", "4.2")])
        let plain = try await GatewayHarness.send(try device.signer.sign(request, created: Date(), nonce: Nonce.random()))
        #expect(plain.status == 401 && plain.reason == "component_not_covered", "\(plain.text)")
        let asked = try Self.asked(plain)
        #expect(asked.components.contains("x-app-version"))
        // Signed as asked: accepted.
        let components = MessageSigner.defaultComponents(for: request) + asked.components.filter { $0.name == "x-app-version" }
        let again = try await GatewayHarness.send(
            try device.signer.sign(request, label: asked.label, components: components, created: Date(), nonce: Nonce.random()))
        #expect(again.status == 200, "\(again.text)")
    }

    /// A signature without the nonce the policy asks, or without the body's digest, is told so too,
    /// and a signature made as it says is accepted.
    @Test func aSignatureWithoutItsNonceOrDigestIsToldWhatToInclude() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.ed25519)
        let get = try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/x")
        let withoutNonce = try await GatewayHarness.send(try device.signer.sign(get, created: Date()))
        #expect(withoutNonce.status == 401 && withoutNonce.reason == "nonce_missing", "\(withoutNonce.text)")
        #expect(try Self.asked(withoutNonce).nonce)

        let post = try HTTPMessage.request(
            method: "POST", uri: harness.base + "/echo/x", fields: [("Content-Type", "application/json")], body: Array("{}".utf8))
        let uncovered = try device.signer.sign(post, components: [.method, .targetURI, "content-type"], created: Date(), nonce: Nonce.random())
        let withoutDigest = try await GatewayHarness.send(uncovered)
        #expect(withoutDigest.status == 401 && ["digest_missing", "digest_not_covered"].contains(withoutDigest.reason), "\(withoutDigest.text)")
        let asked = try Self.asked(withoutDigest)
        #expect(asked.components.contains(.contentDigest) && asked.nonce)
        // Signed as asked (the digest written and covered): accepted.
        let again = try await GatewayHarness.send(
            try device.signer.sign(post, label: asked.label, components: asked.components, created: Date(), nonce: Nonce.random()))
        #expect(again.status == 200, "\(again.text)")
    }

    /// A signature whose `alg` is not its key's is told the key's own (the key record decides the
    /// algorithm, never the message), and signed with it is accepted.
    @Test func anAlgorithmOtherThanTheKeysIsAnsweredWithTheKeysOwn() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.ed25519)
        let get = try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/x")
        // Signed by hand: a signer refuses an algorithm its key is not for.
        let parameters = SignatureParameters(
            components: [.method, .targetURI], created: Int64(Date().timeIntervalSince1970), nonce: Nonce.random(),
            algorithm: "ecdsa-p256-sha256", keyID: device.keyID)
        var claiming = get
        let signature = try Ed25519Algorithm().sign(try SignatureBase(message: get, parameters: parameters).bytes, with: device.key)
        claiming.fields.append(name: "Signature-Input", value: "sig1=" + (try parameters.serialized))
        claiming.fields.append(name: "Signature", value: "sig1=:\(Base64.encode(signature)):")
        let mismatched = try await GatewayHarness.send(claiming)
        #expect(mismatched.status == 401 && mismatched.reason == "alg_mismatch", "\(mismatched.text)")
        let asked = try Self.asked(mismatched)
        #expect(asked.keyID == device.keyID && asked.algorithm == "ed25519", "\(asked)")
        let honest = MessageSigner(key: device.key, keyID: device.keyID, algorithm: Ed25519Algorithm(), includeAlgorithm: true)
        #expect(try await GatewayHarness.send(try honest.sign(get, created: Date(), nonce: Nonce.random())).status == 200)
        // An unknown key is told nothing of any key.
        let stranger = MessageSigner(key: device.key, keyID: "nobody", algorithm: Ed25519Algorithm(), includeAlgorithm: true)
        let unknown = try await GatewayHarness.send(try stranger.sign(get, created: Date(), nonce: Nonce.random()))
        #expect(unknown.reason == "unknown_key" && unknown.headers["Accept-Signature"].isEmpty, "\(unknown.text)")
    }

    /// A key delivered in `Signature-Key` whose signature leaves that field out is asked to cover it
    /// (§7.8), and covering it is accepted.
    @Test func aDeliveredKeyIsAskedToCoverSignatureKey() async throws {
        let harness = try await SignatureKeyTests.start()
        Cleanup.after { try await harness.stop() }
        let key = try SigningKey.generate(.ed25519)
        let member = try SignatureKeyTests.hwk(key, alg: "Ed25519")
        let uncovered = try await SignatureKeyTests.get(harness, "/echo/open-keys", key: key, signatureKey: member, keyID: nil, cover: false)
        #expect(uncovered.status == 401 && uncovered.reason == "component_not_covered", "\(uncovered.text)")
        #expect(try Self.asked(uncovered).components.contains("signature-key"))
        #expect(try await SignatureKeyTests.get(harness, "/echo/open-keys", key: key, signatureKey: member, keyID: nil).status == 200)
        // A registered key on the same route is asked as any.
        let plain = try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/open-keys/x")
        let forPlain = try Self.asked(plain)
        #expect(plain.reason == "signature_missing" && !forPlain.components.contains("signature-key"), "\(plain.text)")
    }

    @Test func coveredFieldsNameFieldsThatReachTheUpstream() throws {
        for fields in [["signature"], ["@method"], ["x-forwarded-for"], ["bad field"], [""]] {
            var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
            configuration.policy.coveredFields = fields
            #expect(throws: ConfigurationError.self, "\(fields)") { try configuration.validate() }
        }
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.policy.coveredFields = ["x-app-version", "authorization"]
        try configuration.validate()
        let decoded = try GatewayConfiguration.decode(Data(#"{"upstream":"http://127.0.0.1:9","policy":{"coveredFields":["x-app-version"]}}"#.utf8))
        #expect(decoded.policy.coveredFields == ["x-app-version"] && decoded.policy.maxAgeSeconds == 300)
    }
}
