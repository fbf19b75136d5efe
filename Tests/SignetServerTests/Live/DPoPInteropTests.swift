// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// DPoP against clients Signet did not write, over real sockets: requests-oauth2client (an RFC 9449
/// client library, with its own proofs and its own retry on `use_dpop_nonce`) and a proof written
/// with joserfc; and the other way, a proof Signet made checked by requests-oauth2client.
@Suite(.awaitsCleanups) struct DPoPInteropTests {
    struct Run {
        var answers: [[String: Any]]
        var nonces: [String]
        var jkt: String
        var statuses: [Int] { answers.compactMap { $0["status"] as? Int } }
        var reasons: [String] { answers.map { ($0["reason"] as? String) ?? "-" } }
    }

    static func client(_ url: String, _ token: String, _ jwk: URL, count: Int, jti: String = "", iatOffset: Int = 0) async throws -> Run {
        let output = try await PythonPeer.run("dpop_peer.py", ["client", url, token, jwk.path, String(count), jti, String(iatOffset)])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        return Run(
            answers: try #require(json["answers"] as? [[String: Any]]),
            nonces: try #require(json["nonces"] as? [String]),
            jkt: try #require(json["jkt"] as? String)
        )
    }

    static func privateJWK(_ device: GatewayHarness.Device, in harness: GatewayHarness) throws -> URL {
        let file = harness.folder.appendingPathComponent("dpop-\(UUID().uuidString).jwk.json")
        try Data(device.key.jwk.jsonString.utf8).write(to: file)
        return file
    }

    @Test func requestsOAuth2ClientUsesABoundTokenAndFollowsTheNonce() async throws {
        guard PythonPeer.available("requests_oauth2client, joserfc") else { return }
        let harness = try await DPoPTests.start(transport: .sockets)
        Cleanup.after { try await harness.stop() }
        for type in [KeyType.p256, .ed25519] {
            let device = try await harness.register(type)
            let token = try await DPoPTests.token(harness, device)
            let jwk = try Self.privateJWK(device, in: harness)

            let bound = try await Self.client(harness.base + "/echo/bound/x?page=2", token, jwk, count: 3)
            #expect(bound.statuses == [200, 200, 200], "\(type): \(bound.answers)")
            #expect(bound.jkt == (try device.key.verificationKey.jwk.thumbprint))
            #expect(bound.nonces.isEmpty)

            // The nonce route: the library's first proof has none, the gateway's 401 hands one
            // out, the library retries with it on its own, and keeps it for the next requests.
            let nonced = try await Self.client(harness.base + "/echo/nonce/x", token, jwk, count: 3)
            #expect(nonced.statuses == [200, 200, 200], "\(type): \(nonced.answers)")
            #expect(nonced.nonces.count == 1)

            // The same jti on every proof: the first is taken, every later one is a replay.
            let replayed = try await Self.client(harness.base + "/echo/bound/x", token, jwk, count: 3, jti: "fixed-\(type.rawValue)")
            #expect(replayed.reasons == ["-", "dpop_proof_replayed", "dpop_proof_replayed"], "\(replayed.answers)")
            // Proofs made ten minutes ago.
            let stale = try await Self.client(harness.base + "/echo/bound/x", token, jwk, count: 1, iatOffset: -600)
            #expect(stale.reasons == ["dpop_proof_stale"], "\(stale.answers)")
            // Another device's key with this device's token.
            let other = try Self.privateJWK(try await harness.register(.p256), in: harness)
            let stolen = try await Self.client(harness.base + "/echo/bound/x", token, other, count: 1)
            #expect(stolen.reasons == ["dpop_key_mismatch"], "\(stolen.answers)")
        }
    }

    @Test func aProofWrittenWithJoserfcIsTakenAndOneSignetMadeVerifiesThere() async throws {
        guard PythonPeer.available("requests_oauth2client, joserfc") else { return }
        let harness = try await DPoPTests.start(transport: .sockets)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let token = try await DPoPTests.token(harness, device)
        let jwk = try Self.privateJWK(device, in: harness)
        func joserfc(_ method: String, _ url: String, nonce: String? = nil) async throws -> [String: Any] {
            let output = try await PythonPeer.run("dpop_peer.py", ["joserfc", method, url, token, jwk.path] + (nonce.map { [$0] } ?? []))
            return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        }
        #expect(try await joserfc("GET", harness.base + "/echo/bound/a")["status"] as? Int == 200)
        #expect(try await joserfc("POST", harness.base + "/echo/bound/a")["status"] as? Int == 200)
        let asked = try await joserfc("GET", harness.base + "/echo/nonce/a")
        #expect(asked["reason"] as? String == "dpop_nonce_required")
        let nonce = try #require(asked["nonce"] as? String)
        #expect(try await joserfc("GET", harness.base + "/echo/nonce/a", nonce: nonce)["status"] as? Int == 200)

        // Signet's proof, as the client SDK makes it, checked by requests-oauth2client.
        let url = "https://api.example.com/scores"
        let proof = try DPoPProof.make(key: device.key, method: "PUT", url: url + "?x=1", accessToken: token, now: Date())
        let output = try await PythonPeer.run("dpop_peer.py", ["validate", proof, "PUT", url, token])
        let checked = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(checked["jkt"] as? String == (try device.key.verificationKey.jwk.thumbprint))
        #expect((checked["claims"] as? [String: Any])?["htu"] as? String == url)
    }
}
