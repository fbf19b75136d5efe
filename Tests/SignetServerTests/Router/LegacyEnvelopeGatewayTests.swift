// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// `legacy-envelope` routes: encrypted bodies of apps already shipped reach the upstream decrypted,
/// and every way an envelope can be wrong is one refusal that reaches nothing.
@Suite(.awaitsCleanups) struct LegacyEnvelopeGatewayTests {
    static let secret: [UInt8] = (0..<64).map { UInt8($0) }
    static let encryptionSalt: [UInt8] = Array("pepper-1".utf8)
    static let macSalt: [UInt8] = Array("pepper-2".utf8)

    static func start(_ format: GatewayConfiguration.LegacyEnvelope.Format) async throws -> GatewayHarness {
        try await GatewayHarness.start(transport: .router) { configuration in
            configuration.routes.insert(.init(prefix: "/scores", methods: ["POST"], access: .legacyEnvelope), at: 0)
            configuration.legacyEnvelope = .init(
                format: format,
                keys: [
                    .init(version: "1", secretBase64: Base64.encode(secret)),
                    .init(
                        version: "2",
                        password: "correct horse",
                        encryptionSaltBase64: Base64.encode(encryptionSalt),
                        macSaltBase64: Base64.encode(macSalt)
                    ),
                ]
            )
        }
    }

    static func post(_ body: [UInt8], to harness: GatewayHarness) async throws -> GatewayHarness.Answer {
        try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/scores",
            headers: [("Content-Type", "application/json")],
            body: body
        )
    }

    static func passwordKey() throws -> EnvelopeKey {
        try RNCryptorV3.key(password: Array("correct horse".utf8), salts: (encryptionSalt, macSalt), version: "2")
    }

    @Test func jsonEnvelopesOpenAtTheGatewayWithTheKeyTheirVersionNames() async throws {
        let harness = try await Self.start(.json)
        Cleanup.after { try await harness.stop() }
        let v1 = try EnvelopeKey(version: "1", encryptionKey: Array(Self.secret[..<32]), macKey: Array(Self.secret[32...]))
        let first = try await Self.post(try JSONEnvelope.seal(Array(#"{"name":"Env","score":5}"#.utf8), key: v1), to: harness)
        #expect(first.status == 201, "\(first.text)")
        let second = try await Self.post(
            try JSONEnvelope.seal(Array(#"{"name":"Pass","score":6}"#.utf8), key: try Self.passwordKey()),
            to: harness
        )
        #expect(second.status == 201, "\(second.text)")
        #expect(harness.backend.allEntries.map(\.name) == ["Env", "Pass"])

        // Wrong MAC, unknown version, another key's envelope, not JSON: one refusal, same words.
        let sealed = try JSONEnvelope.seal(Array(#"{"name":"X","score":1}"#.utf8), key: v1)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(sealed)) as? [String: String])
        var answers: [GatewayHarness.Answer] = []
        object["version"] = "9"
        answers.append(try await Self.post(Array(try JSONSerialization.data(withJSONObject: object)), to: harness))
        object["version"] = "2"
        answers.append(try await Self.post(Array(try JSONSerialization.data(withJSONObject: object)), to: harness))
        object["version"] = "1"
        object["mac"] = Base64.encode([UInt8](repeating: 7, count: 32))
        answers.append(try await Self.post(Array(try JSONSerialization.data(withJSONObject: object)), to: harness))
        answers.append(try await Self.post(Array("not json".utf8), to: harness))
        for answer in answers {
            #expect(answer.status == 400 && answer.reason == "envelope_invalid", "\(answer.text)")
            #expect(answer.json["detail"] as? String == "the envelope does not open")
        }
        #expect(harness.backend.receivedCount == 2)
    }

    @Test func rncryptorMessagesOpenWithConfiguredKeysOrTheConfiguredSalts() async throws {
        let harness = try await Self.start(.rncryptor)
        Cleanup.after { try await harness.stop() }
        let v1 = try EnvelopeKey(version: "1", encryptionKey: Array(Self.secret[..<32]), macKey: Array(Self.secret[32...]))
        let keyed = try await Self.post(try RNCryptorV3.seal(Array(#"{"name":"Rn","score":7}"#.utf8), key: v1), to: harness)
        #expect(keyed.status == 201, "\(keyed.text)")
        let salted = try RNCryptorV3.seal(
            Array(#"{"name":"Salted","score":8}"#.utf8),
            key: try Self.passwordKey(),
            passwordSalts: (Self.encryptionSalt, Self.macSalt)
        )
        #expect(try await Self.post(salted, to: harness).status == 201)
        // The right password with salts of its own: the gateway derives nothing per request, so no.
        let fresh = (EnvelopeKey.randomSalt(), EnvelopeKey.randomSalt())
        let elsewhere = try RNCryptorV3.seal(
            Array(#"{"name":"No","score":9}"#.utf8),
            key: try RNCryptorV3.key(password: Array("correct horse".utf8), salts: fresh),
            passwordSalts: fresh
        )
        let refused = try await Self.post(elsewhere, to: harness)
        #expect(refused.status == 400 && refused.reason == "envelope_invalid")
        #expect(harness.backend.allEntries.map(\.name) == ["Rn", "Salted"])
    }



    /// What the upstream receives from an opened envelope: the plaintext with its own length, the
    /// configured `plaintextContentType` whatever the app declared, and who opened it — the key's
    /// version as `Signet-Key-Id`, trust level `shared-secret` — none of it the client's to say.
    @Test func theUpstreamGetsThePlaintextAndWhoseKeyOpenedIt() async throws {
        let harness = try await Self.start(.json)
        Cleanup.after { try await harness.stop() }
        let upstream = try #require(harness.upstream)
        let v1 = try EnvelopeKey(version: "1", encryptionKey: Array(Self.secret[..<32]), macKey: Array(Self.secret[32...]))
        let plaintext = Array(#"{"name":"Env","score":5}"#.utf8)
        let answer = try await harness.sendAsWritten(
            "POST",
            "/scores",
            fields: [("Content-Type", "text/plain"), ("Signet-Key-Id", "envelope-9"), ("Signet-Trust-Level", "app-attest")],
            body: try JSONEnvelope.seal(plaintext, key: v1)
        )
        #expect(answer.status == 201, "\(answer.text)")
        let received = try #require(upstream.received.last)
        #expect(received.body == plaintext)
        #expect(received.fields["Content-Length"] == [String(plaintext.count)])
        #expect(received.fields["Content-Type"] == ["application/json"])
        #expect(received.fields["Signet-Key-Id"] == ["envelope-1"] && received.fields["Signet-Trust-Level"] == ["shared-secret"], "\(received.fields.all)")
        #expect(received.fields["Signet-Device"].isEmpty)
    }

}
