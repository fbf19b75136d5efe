// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
@testable import SignetServer
import SignetTestSupport
import Testing

/// Client attestations against implementations Signet did not write, over real sockets: PyJWT
/// checks an attestation the gateway issued with the gateway's JWKS, as an authorization server
/// behind it would; PoPs written with joserfc are taken once each, follow the gateway's
/// challenges, and are refused when stale or made by another key.
@Suite(.awaitsCleanups) struct ClientAttestationInteropTests {
    struct Run {
        var answers: [[String: Any]]
        var challenges: Int
        var statuses: [Int] { answers.compactMap { $0["status"] as? Int } }
        var reasons: [String] { answers.map { ($0["reason"] as? String) ?? "-" } }
        var errors: [String] { answers.map { ($0["error"] as? String) ?? "-" } }
    }

    static func client(
        _ url: String,
        _ attestation: String,
        _ jwk: URL,
        audience: String = ClientAttestationTests.audience,
        count: Int,
        jti: String = "",
        challengeURL: String = "",
        iatOffset: Int = 0
    ) async throws -> Run {
        let output = try await PythonPeer.run(
            "client_attestation_peer.py",
            ["client", url, attestation, jwk.path, audience, String(count), jti, challengeURL, String(iatOffset)]
        )
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        return Run(answers: try #require(json["answers"] as? [[String: Any]]), challenges: try #require(json["challenges"] as? Int))
    }

    static func start() async throws -> GatewayHarness {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-attester-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try await GatewayHarness.start(transport: .sockets) { configuration in
            configuration.tokens = .init(issuer: AppTokenTests.issuer, audience: ["scores"], keyFile: folder.appendingPathComponent("tokens.pem").path)
            configuration.clientAttestation = .init(clientId: ClientAttestationTests.clientID, audience: ClientAttestationTests.audience)
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/attested", access: .init(mode: "client-attestation")),
                .init(prefix: "/echo/challenged", access: .init(mode: "client-attestation", options: ["attestationChallenge": .bool(true)])),
            ], at: 0)
        }
    }

    @Test func pyJWTVerifiesAnAttestationAndJoserfcPoPsAreTakenOnce() async throws {
        guard PythonPeer.available("jwt, joserfc, requests") else { return }
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        for type in [KeyType.p256, .ed25519] {
            let device = try await harness.register(type)
            let attestation = try await ClientAttestationTests.attestation(harness, device)

            // PyJWT, as an authorization server would check it, with the gateway's JWKS.
            let output = try await PythonPeer.run(
                "client_attestation_peer.py",
                ["verify", attestation, harness.base + "/signet/v1/jwks", AppTokenTests.issuer, ClientAttestationTests.clientID]
            )
            let verified = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            let claims = try #require(verified["claims"] as? [String: Any])
            let cnf = try #require((claims["cnf"] as? [String: Any])?["jwk"] as? [String: Any])
            #expect(cnf["x"] as? String == device.key.verificationKey.jwk.x && claims["device_id"] as? String == device.deviceID, "\(claims)")

            let jwk = harness.folder.appendingPathComponent("attester-\(UUID().uuidString).jwk.json")
            try Data(device.key.jwk.jsonString.utf8).write(to: jwk)
            let run = try await Self.client(harness.base + "/echo/attested/x", attestation, jwk, count: 3)
            #expect(run.statuses == [200, 200, 200], "\(type): \(run.answers)")

            // The same jti on every PoP: the first is taken, every later one is a replay.
            let replayed = try await Self.client(harness.base + "/echo/attested/x", attestation, jwk, count: 2, jti: "fixed-\(type.rawValue)")
            #expect(replayed.reasons == ["-", "client_attestation_pop_replayed"], "\(replayed.answers)")
            #expect(replayed.errors == ["-", "invalid_client_attestation"])
            // PoPs made ten minutes ago; PoPs for another audience; another device's key.
            let stale = try await Self.client(harness.base + "/echo/attested/x", attestation, jwk, count: 1, iatOffset: -600)
            #expect(stale.reasons == ["client_attestation_pop_stale"], "\(stale.answers)")
            let elsewhere = try await Self.client(harness.base + "/echo/attested/x", attestation, jwk, audience: "https://as.example.com", count: 1)
            #expect(elsewhere.reasons == ["client_attestation_pop_invalid"], "\(elsewhere.answers)")
            let other = harness.folder.appendingPathComponent("attester-\(UUID().uuidString).jwk.json")
            try Data(try await harness.register(.p256).key.jwk.jsonString.utf8).write(to: other)
            let stolen = try await Self.client(harness.base + "/echo/attested/x", attestation, other, count: 1)
            #expect(stolen.reasons == ["client_attestation_pop_invalid"], "\(stolen.answers)")
        }
    }

    /// The draft's two ways to a challenge: the endpoint (§7.1), then each answer's header (§7.2),
    /// which the client follows for its next PoP.
    @Test func joserfcPoPsFollowTheGatewaysChallenges() async throws {
        guard PythonPeer.available("jwt, joserfc, requests") else { return }
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let attestation = try await ClientAttestationTests.attestation(harness, device)
        let jwk = harness.folder.appendingPathComponent("attester-\(UUID().uuidString).jwk.json")
        try Data(device.key.jwk.jsonString.utf8).write(to: jwk)

        let fetched = try await Self.client(
            harness.base + "/echo/challenged/x",
            attestation,
            jwk,
            count: 3,
            challengeURL: harness.base + "/signet/v1/attestation-challenge"
        )
        #expect(fetched.statuses == [200, 200, 200] && fetched.challenges == 4, "\(fetched.answers)")
        // Admitted on the event-loop data plane, each answer with the next challenge (issue 39).
        #expect(harness.gateway.listeners.dataPlane.forwardedCount == 3)
        // Without one, the first PoP is refused with the draft's error and a challenge, which the
        // next PoP carries.
        let followed = try await Self.client(harness.base + "/echo/challenged/x", attestation, jwk, count: 2)
        #expect(followed.reasons == ["client_attestation_challenge_required", "-"], "\(followed.answers)")
        #expect(followed.errors.first == "use_attestation_challenge")

        // Combined mode (draft -11): DPoP proofs written with joserfc stand in for the PoP, a DPoP
        // nonce in them after the first refusal's `use_dpop_nonce`, no attestation challenge.
        let output = try await PythonPeer.run("client_attestation_peer.py", ["combined", harness.base + "/echo/challenged/z", attestation, jwk.path, "3"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let answers = try #require(json["answers"] as? [[String: Any]])
        #expect(answers.map { ($0["reason"] as? String) ?? "-" } == ["dpop_nonce_required", "-", "-"], "\(answers)")
        #expect((answers.first?["wwwAuthenticate"] as? String)?.hasPrefix("DPoP error=\"use_dpop_nonce\"") == true, "\(answers)")
        // Each answer of the route hands out an attestation challenge too (§6.2), which the DPoP
        // client leaves aside.
        #expect(json["challenges"] as? Int == 3, "\(json)")
    }
}
