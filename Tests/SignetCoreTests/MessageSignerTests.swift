// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Testing

/// A server that keeps its own representation of a message asks the signer only for what to add.
@Suite struct MessageSignerTests {
    @Test func theFieldsASignatureAddsAreWhatSignAppends() throws {
        let signer = MessageSigner(key: try SigningKey.generate(.ed25519), keyID: "gateway", algorithm: Ed25519Algorithm())
        let request = try HTTPMessage.request(method: "POST", uri: "https://api.example.com/scores", body: Array("{}".utf8))
        let response = HTTPMessage.response(status: 201, fields: [("Content-Type", "application/json")], body: Array(#"{"ok":true}"#.utf8))
        let created = Date(timeIntervalSince1970: 1_800_000_000)
        let components: [ComponentIdentifier] = [.status, .contentDigest, "content-type"]
        let added = try signer.signatureFields(for: response, label: "gateway", components: components, created: created, relatedRequest: request)
        #expect(added.map(\.name) == ["Content-Digest", "Signature-Input", "Signature"])
        // Ed25519 is deterministic: the same signature as the whole-message path.
        let signed = try signer.sign(response, label: "gateway", components: components, created: created, relatedRequest: request)
        #expect(Array(signed.fields.lines.dropFirst(response.fields.lines.count)).map { "\($0.name): \($0.value)" } == added.map { "\($0.name): \($0.value)" })
        // A digest already there is covered, not added again.
        var digested = response
        digested.fields.append(name: "Content-Digest", value: ContentDigest.fieldValue(for: response.body, algorithm: .sha256))
        let again = try signer.signatureFields(for: digested, label: "gateway", components: components, created: created)
        #expect(again.map(\.name) == ["Signature-Input", "Signature"])
        // A label in use is refused.
        #expect(throws: SignetError.self) { try signer.signatureFields(for: signed, label: "gateway", created: created) }
    }
}
