// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Testing

/// The Web Bot Auth draft's own signatures (draft-ietf-webbotauth-httpsig-protocol, Appendix E.2):
/// a request whose `Signature-Agent` is a dictionary covered by its member
/// (`"signature-agent";key="sig2"`), one with the legacy string form, and a key directory's signed
/// response (`"@authority";req`, `content-digest`) — each verified by Signet's RFC 9421 verifier
/// with the draft's `tag`, each refused when a byte changes.
@Suite struct WebBotAuthVectorTests {
    nonisolated(unsafe) static let vectors: [String: Any] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/webbotauth/draft-01.json")
        return (try? JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]) ?? [:]
    }()

    static func ring() throws -> KeyRing {
        let key = try VerificationKey(jwk: JWK(json: JSONSerialization.data(withJSONObject: vectors["key"] as Any)))
        return KeyRing([KeyRecord(keyID: vectors["keyid"] as! String, algorithm: "ed25519", key: key)])
    }

    static func fields(_ object: [String: Any]) -> MessageFields {
        MessageFields((object["headers"] as? [[String]] ?? []).map { MessageFields.Field(name: $0[0], value: $0[1]) })
    }

    @Test func theDraftsRequestSignaturesVerifyWithTheirTag() async throws {
        let requests = Self.vectors["requests"] as? [[String: Any]] ?? []
        #expect(requests.count == 2)
        for vector in requests {
            let message = try HTTPMessage.request(method: vector["method"] as! String, uri: vector["url"] as! String, fields: Self.fields(vector))
            let at = Date(timeIntervalSince1970: vector["at"] as! TimeInterval)
            // The profile's rules (§5.2): created and expires, the tag, `@authority` or `@target-uri`.
            var policy = VerificationPolicy.standard
            policy.requiredTag = "web-bot-auth"
            policy.requireExpires = true
            policy.componentRules = [.init(oneOf: [["@authority"], ["@target-uri"]])]
            let verifier = MessageVerifier(keys: try Self.ring(), policy: policy, nonces: MemoryNonceStore())
            let verified = try await verifier.verify(message, now: at)
            #expect(verified.tag == "web-bot-auth" && verified.keyID == Self.vectors["keyid"] as? String, "\(vector["name"]!)")
            #expect(verified.components.contains { $0.name == "signature-agent" })
            // Another agent named under the same signature: it no longer verifies.
            var moved = message
            moved.fields = MessageFields(message.fields.lines.map {
                $0.name == "Signature-Agent" ? .init(name: $0.name, value: $0.value.replacingOccurrences(of: "signature-agent.test", with: "evil.test")) : $0
            })
            let error = await #expect(throws: SignetError.self) { try await verifier.verify(moved, now: at) }
            #expect(error?.code == .signatureInvalid, "\(vector["name"]!)")
            // Another tag is not this profile's.
            policy.requiredTag = "agent-payer-auth"
            let other = await #expect(throws: SignetError.self) {
                try await MessageVerifier(keys: try Self.ring(), policy: policy, nonces: nil).verify(message, now: at)
            }
            #expect(other?.code == .tagMismatch)
        }
    }

    @Test func theDraftsSignedDirectoryResponseVerifies() async throws {
        let vector = try #require(Self.vectors["directory"] as? [String: Any])
        let request = vector["request"] as! [String: Any]
        let related = try HTTPMessage.request(method: request["method"] as! String, uri: request["url"] as! String)
        let body = Array((vector["body"] as! String).utf8)
        let response = HTTPMessage.response(status: vector["status"] as! Int, fields: Self.fields(vector), body: body)
        var policy = VerificationPolicy.standard
        policy.requiredTag = "http-message-signatures-directory"
        policy.requireNonce = false
        let verifier = MessageVerifier(keys: try Self.ring(), policy: policy, nonces: nil)
        let at = Date(timeIntervalSince1970: vector["at"] as! TimeInterval)
        let verified = try await verifier.verify(response, relatedRequest: related, now: at)
        #expect(verified.tag == "http-message-signatures-directory")
        // The body is the keys: one changed is a digest that does not match.
        var tampered = response
        tampered.body = Array((vector["body"] as! String).replacingOccurrences(of: "\"use\":\"sig\"", with: "\"use\":\"enc\"").utf8)
        let error = await #expect(throws: SignetError.self) { try await verifier.verify(tampered, relatedRequest: related, now: at) }
        #expect(error?.code == .digestMismatch)
    }
}
