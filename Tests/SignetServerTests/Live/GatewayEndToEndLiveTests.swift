// SPDX-License-Identifier: Apache-2.0
import Crypto
import ExampleScores
import Foundation
import NIOHTTP1
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// The gateway over real HTTP where the wire is the point: a signature over the Host line as sent,
/// and challenges across two instances.
@Suite(.awaitsCleanups) struct GatewayEndToEndLiveTests {
    @Test func aSignatureCoveringTheHostFieldVerifies() async throws {
        let harness = try await GatewayHarness.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.ed25519)
        let authority = "127.0.0.1:\(harness.gateways[0].port)"
        let request = try HTTPMessage.request(
            method: "GET",
            uri: harness.base + "/echo/headers",
            fields: [("Host", authority)]
        )
        let signed = try device.signer.sign(
            request,
            components: [.method, .targetURI, "host"],
            created: Date(),
            nonce: Nonce.random()
        )
        #expect(try await GatewayHarness.send(signed).status == 200)
    }

    @Test func aChallengeWorksOnEveryInstanceOnceAndOnlyAsIssued() async throws {
        let harness = try await GatewayHarness.start(instances: 2)
        Cleanup.after { try await harness.stop() }
        let challenge = try await harness.challenge(gateway: 0)
        func register(_ challenge: String, on gateway: Int) async throws -> GatewayHarness.Answer {
            try await GatewayHarness.send(
                method: "POST",
                url: harness.url(gateway) + "/signet/v1/devices",
                headers: [("Content-Type", "application/json")],
                body: try harness.registration(key: try SigningKey.generate(.p256), alg: "ecdsa-p256-sha256", challenge: challenge)
            )
        }
        // Issued by one instance, used on the other (the key is shared through the store), once.
        #expect(try await register(challenge, on: 1).status == 201)
        let again = try await register(challenge, on: 0)
        #expect(again.status == 401 && again.reason == "challenge_unknown", "\(again.text)")
        // Altered, or never issued: unknown, and nothing is stored for it.
        var altered = Array(try await harness.challenge(gateway: 1))
        altered[10] = altered[10] == "A" ? "B" : "A"
        let forged = try await register(String(altered), on: 0)
        #expect(forged.status == 401 && forged.reason == "challenge_unknown", "\(forged.text)")
    }
}
