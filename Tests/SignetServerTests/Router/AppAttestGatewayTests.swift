// SPDX-License-Identifier: Apache-2.0
import Crypto
import ExampleScores
import Foundation
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetSimulator
import SignetTestSupport
import Testing

/// A simulated App Attest device through the real verification path: attestation, then requests
/// signed with assertions as the `apple-app-attest` RFC 9421 algorithm.
@Suite(.awaitsCleanups) struct AppAttestGatewayTests {
    @Test func anAttestedDeviceSignsWithAssertionsAndCountersOnlyMoveForward() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        let registered = try await harness.attest(device)
        #expect(registered.status == 201, "\(registered.text)")
        #expect(registered.json["keyid"] as? String == device.keyID)
        #expect(registered.json["environment"] as? String == "development")
        let deviceID = try #require(registered.json["deviceId"] as? String)

        let signer = SimulatedAppAttestSigner(device: device)
        let first = try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        let accepted = try await GatewayHarness.send(first)
        #expect(accepted.status == 201, "\(accepted.text)")
        #expect(accepted.json["player"] as? String == deviceID)
        // The attested route lets it through (the backend has no such page: 404 from upstream).
        let vault = try signer.sign(
            try HTTPMessage.request(method: "GET", uri: harness.base + "/attested/vault"),
            created: Date(),
            nonce: Nonce.random()
        )
        let vaultAnswer = try await GatewayHarness.send(vault)
        #expect(vaultAnswer.status == 404 && vaultAnswer.reason == nil, "\(vaultAnswer.text)")

        // A replay is caught; so is a fresh request whose assertion rolls the counter back.
        #expect(try await GatewayHarness.send(first).reason == "nonce_replayed")
        let rollback = try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random(), counter: 1)
        let rolledBack = try await GatewayHarness.send(rollback)
        #expect(rolledBack.status == 401 && rolledBack.reason == "counter_not_increasing", "\(rolledBack.text)")
        // A tampered body under a valid assertion.
        var tampered = try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        tampered.body = Array("{\"name\":\"Gilgamesh\",\"score\":999}".utf8)
        #expect(try await GatewayHarness.send(tampered).reason == "digest_mismatch")
        #expect(harness.backend.receivedCount == 1)
    }

    /// Two requests signed at once arrive in the opposite order: strict counters refuse the earlier
    /// one; with a window — the default's (16) too — both pass, and each counter still passes once.
    @Test(arguments: [0, 8, nil] as [Int?])
    func outOfOrderAssertionsAndTheCounterWindow(_ window: Int?) async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.appAttest?.counterWindow = window }
        Cleanup.after { try await harness.stop() }
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        #expect(try await harness.attest(device).status == 201)
        let signer = SimulatedAppAttestSigner(device: device)
        let earlier = try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random(), counter: 2)
        let later = try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random(), counter: 3)
        #expect(try await GatewayHarness.send(later).status == 201)
        let late = try await GatewayHarness.send(earlier)
        if window == 0 {
            #expect(late.reason == "counter_not_increasing")
        } else {
            #expect(late.status == 201, "\(late.text)")
            // The same counter under a fresh nonce: refused, the window remembers it.
            let again = try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random(), counter: 2)
            #expect(try await GatewayHarness.send(again).reason == "counter_not_increasing")
        }
        #expect(harness.backend.receivedCount == (window == 0 ? 1 : 2))
    }

    @Test func attestationRejections() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        // Another app's device, a device from an untrusted CA, a reused challenge.
        let otherApp = SimulatedAppAttestDevice(appID: "ZZZZZ99999.other.app", ca: GatewayHarness.simulatorCA)
        #expect(try await harness.attest(otherApp).reason == "app_id_mismatch")
        let rogue = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: try DevelopmentAttestationCA())
        #expect(try await harness.attest(rogue).reason == "attestation_chain_invalid")
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        let challenge = try await harness.challenge()
        let attestation = try device.attest(clientDataHash: Array(SHA256.hash(data: Array("another challenge".utf8))))
        let body: [String: Any] = [
            "keyId": device.keyID, "attestation": Base64.encode(attestation), "challenge": challenge,
        ]
        let answer = try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/devices/attest",
            headers: [("Content-Type", "application/json")],
            body: Array(try JSONSerialization.data(withJSONObject: body))
        )
        #expect(answer.status == 401 && answer.reason == "attestation_nonce_mismatch", "\(answer.text)")
        // Not declared JSON: refused before the body is read.
        let untyped = try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/devices/attest",
            headers: [("Content-Type", "text/plain")],
            body: Array(try JSONSerialization.data(withJSONObject: body))
        )
        #expect(untyped.status == 415 && untyped.reason == "unsupported_media_type", "\(untyped.text)")
        // A device key (not attested) cannot enter an app-attest route.
        let keyDevice = try await harness.register()
        let vault = try keyDevice.signer.sign(
            try HTTPMessage.request(method: "GET", uri: harness.base + "/attested/vault"),
            created: Date(),
            nonce: Nonce.random()
        )
        #expect(try await GatewayHarness.send(vault).reason == "trust_level_insufficient")
    }

    /// An attestation the body does not describe: made for another key than `keyId` names, from
    /// the development environment where only production is taken, or not CBOR at all. Each is
    /// refused with its code, spends its challenge, and registers nothing.
    @Test func anAttestationForAnotherKeyEnvironmentOrNotCBORIsRefused() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        /// Registers `keyID` with the attestation made for a fresh challenge.
        func attest(keyID: String, attestation: (String) throws -> [UInt8]) async throws -> GatewayHarness.Answer {
            let challenge = try await harness.challenge()
            let body: [String: Any] = ["keyId": keyID, "attestation": Base64.encode(try attestation(challenge)), "challenge": challenge]
            return try await GatewayHarness.send(
                method: "POST",
                url: harness.base + "/signet/v1/devices/attest",
                headers: [("Content-Type", "application/json")],
                body: Array(try JSONSerialization.data(withJSONObject: body))
            )
        }
        func made(by device: SimulatedAppAttestDevice, for challenge: String) throws -> [UInt8] {
            try device.attest(clientDataHash: Array(SHA256.hash(data: Array(challenge.utf8))))
        }
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        let other = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)

        // Another device's attestation under this device's key id (the challenge is the one sent).
        let swapped = try await attest(keyID: device.keyID) { try made(by: other, for: $0) }
        #expect(swapped.status == 401 && swapped.reason == "attestation_key_mismatch", "\(swapped.text)")
        let notCBOR = try await attest(keyID: device.keyID) { _ in Array("not an attestation object".utf8) }
        #expect(notCBOR.status == 400 && notCBOR.reason == "malformed_cbor", "\(notCBOR.text)")
        let truncated = try await attest(keyID: device.keyID) { _ in Array(try made(by: device, for: "x").prefix(40)) }
        #expect(truncated.status == 400 && truncated.reason == "malformed_cbor", "\(truncated.text)")
        #expect(try await harness.store.listDevices(DeviceListing(search: "", after: nil, limit: 10)).isEmpty)
        #expect(try await harness.attest(device).status == 201)

        // A production gateway takes no development key.
        let production = try await GatewayHarness.start(transport: .router) { $0.appAttest?.allowDevelopment = false }
        Cleanup.after { try await production.stop() }
        let development = try await production.attest(other)
        #expect(development.status == 401 && development.reason == "environment_mismatch", "\(development.text)")
    }


    /// A refused request never moves a device's counter: an assertion refused by the route's level
    /// or by a tampered body leaves the counter where it was, so the next counter still passes —
    /// strict counters (no window) included.
    @Test func aRefusedAssertionNeverAdvancesTheCounter() async throws {
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.appAttest?.counterWindow = 0
            $0.routes.insert(.init(prefix: "/echo/android", access: .androidKeyAttestation), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        #expect(try await harness.attest(device).status == 201)
        let signer = SimulatedAppAttestSigner(device: device)
        func get(_ path: String, counter: UInt32) throws -> HTTPMessage {
            try signer.sign(try HTTPMessage.request(method: "GET", uri: harness.base + path), created: Date(), nonce: Nonce.random(), counter: counter)
        }
        let wrongRoute = try await GatewayHarness.send(try get("/echo/android/x", counter: 9))
        #expect(wrongRoute.reason == "trust_level_insufficient")
        var tampered = try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random(), counter: 9)
        tampered.body = Array(#"{"name":"Gilgamesh","score":999}"#.utf8)
        #expect(try await GatewayHarness.send(tampered).reason == "digest_mismatch")
        // Counter 5 is above what was accepted (nothing yet), though 9 was refused twice.
        #expect(try await GatewayHarness.send(try get("/attested/a", counter: 5)).status == 404, "reached the upstream, which has no such page")
        #expect(try await GatewayHarness.send(try get("/attested/b", counter: 6)).status == 404)
        #expect(try await GatewayHarness.send(try get("/attested/c", counter: 6)).reason == "counter_not_increasing")
    }

}
