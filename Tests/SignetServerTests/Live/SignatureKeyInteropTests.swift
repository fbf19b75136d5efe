// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
@testable import SignetServer
import SignetTestSupport
import Testing

/// Requests signed by pyauth's http-message-signatures with the key delivered in `Signature-Key`,
/// the member written by Python's cryptography: `hwk` keys of each type, and a device's client
/// attestation as a `jwt` member — taken by the gateway as the draft says, a replay refused.
@Suite(.awaitsCleanups) struct SignatureKeyInteropTests {
    /// pyauth's signed request, as the peer printed it.
    static func signed(_ scheme: String, _ algorithm: String, key: SigningKey, extra: String, url: String) async throws -> [String: Any] {
        let folder = try SignetProcess.temporaryDirectory()
        try Data(try #require(key.pemRepresentation).utf8).write(to: folder.appendingPathComponent("key.pem"))
        let message: [String: Any] = ["method": "GET", "url": url, "headers": [] as [[String]], "body_b64": "", "nonce": Nonce.random()]
        try JSONSerialization.data(withJSONObject: message).write(to: folder.appendingPathComponent("m.json"))
        let output = try await PythonPeer.run("signature_key_peer.py", [scheme, algorithm, "key.pem", extra, "m.json"], in: folder)
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    static func send(_ wire: [String: Any]) async throws -> GatewayHarness.Answer {
        let headers = (wire["headers"] as? [[String]] ?? []).filter { !["host", "content-length"].contains($0[0].lowercased()) }
        return try await GatewayHarness.send(method: "GET", url: wire["url"] as! String, headers: headers.map { ($0[0], $0[1]) })
    }

    @Test(arguments: [("ed25519", "Ed25519", KeyType.ed25519), ("ecdsa-p256-sha256", "ES256", .p256), ("rsa-pss-sha512", "PS512", .rsa)])
    func pyauthSignsWithAnHwkKey(_ algorithm: String, _ jose: String, _ type: KeyType) async throws {
        guard PythonPeer.available("http_message_signatures, cryptography") else { return }
        let harness = try await SignatureKeyTests.start(transport: .sockets)
        Cleanup.after { try await harness.stop() }
        let key = try SigningKey.generate(type)
        let wire = try await Self.signed("hwk", algorithm, key: key, extra: jose, url: harness.base + "/echo/open-keys")
        let accepted = try await Self.send(wire)
        #expect(accepted.status == 200, "\(accepted.text)")
        let echoed = accepted.json["headers"] as? [String: String] ?? [:]
        #expect(echoed["signet-trust-level"] == "pseudonymous")
        #expect(echoed["signet-key-id"] == (try key.verificationKey.jwk.thumbprint))
        #expect(wire["keyid"] as? String == (try key.verificationKey.jwk.thumbprint), "Python and Signet agree on the RFC 7638 thumbprint")
        let replay = try await Self.send(wire)
        #expect(replay.status == 401 && replay.reason == "nonce_replayed" && replay.headers["Signature-Error"] == ["error=invalid_request"])
        // Its key read from the request, verified on the event-loop data plane (issue 39).
        #expect(harness.gateway.listeners.dataPlane.forwardedCount == 1 && harness.gateway.listeners.dataPlane.refusedCount == 1)
    }

    @Test func pyauthSignsWithTheKeyAClientAttestationDelivers() async throws {
        guard PythonPeer.available("http_message_signatures, cryptography") else { return }
        let harness = try await SignatureKeyTests.start(transport: .sockets)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let attestation = try await ClientAttestationTests.attestation(harness, device)
        let wire = try await Self.signed("jwt", "ecdsa-p256-sha256", key: device.key, extra: attestation, url: harness.base + "/echo/devices")
        let accepted = try await Self.send(wire)
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect((accepted.json["headers"] as? [String: String])?["signet-device"] == device.deviceID)
        // Another key signing under the same attestation is refused.
        let thief = try await Self.signed("jwt", "ecdsa-p256-sha256", key: try SigningKey.generate(.p256), extra: attestation, url: harness.base + "/echo/devices")
        let refused = try await Self.send(thief)
        #expect(refused.status >= 400 && refused.headers["Signature-Error"].first != nil, "\(refused.text)")
    }

    /// A known agent (Web Bot Auth) whose request pyauth signs with Visa's tags: its key found in
    /// the directory the agent publishes (served by Python), verified on the event-loop data
    /// plane; a tag the gateway is not configured for is refused `tag_mismatch`.
    @Test func pyauthSignsAsAKnownAgentWithVisasTags() async throws {
        guard PythonPeer.available("http_message_signatures, cryptography") else { return }
        let key = try SigningKey.generate(.ed25519)
        let setup = try await WebBotAuthTests.start(publishing: [key], transport: .sockets)
        Cleanup.after {
            try await setup.harness.stop()
            setup.directory.stop()
        }
        for (tag, reason) in [("agent-browser-auth", nil), ("web-bot-auth", nil), ("agent-payer-auth", "tag_mismatch")] {
            let wire = try await Self.signed("agent", "ed25519", key: key, extra: "\(setup.origin),\(tag)", url: setup.harness.base + "/echo/agents/shop")
            let answer = try await Self.send(wire)
            if let reason {
                #expect(answer.status == 401 && answer.reason == reason, "\(tag): \(answer.text)")
            } else {
                #expect(answer.status == 200, "\(tag): \(answer.text)")
                let echoed = answer.json["headers"] as? [String: String] ?? [:]
                #expect(echoed["signet-agent"] == "example-bot" && echoed["signet-trust-level"] == "agent", "\(tag): \(echoed)")
            }
        }
        #expect(setup.harness.gateway.listeners.dataPlane.forwardedCount == 2)
    }
}
