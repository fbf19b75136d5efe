// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetMiddleware
import SignetServer
import SignetSimulator
import SignetStore
import SignetTestSupport
import Testing

/// The simulator's and CI's credential, as App Check's debug provider is: a key made once and kept,
/// registered at the gateway by an operator, accepted at trust level `debug` where the gateway
/// allows debug devices, refused by routes that name a platform, and nowhere else.
@Suite(.awaitsCleanups) struct DebugDeviceTests {
    static func gateway(allowDebugDevices: Bool = true) async throws -> GatewayHarness {
        try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) {
            $0.allowDebugDevices = allowDebugDevices
            $0.routes.insert(.init(prefix: "/scores", access: .attested), at: 0)
        }
    }

    /// `POST /signet/v1/devices/debug` with the admin token (or another one), over the gateway's TLS.
    static func add(_ provider: DebugDeviceProvider, to harness: GatewayHarness, token: String = GatewayHarness.adminToken)
        async throws -> ClientResponse
    {
        let jwk = try JSONSerialization.jsonObject(with: Data(try await provider.publicKeyJWK().jsonString.utf8))
        let body = try JSONSerialization.data(withJSONObject: ["name": "Ana's simulator", "publicKey": jwk])
        return try await harness.client().send(
            "POST",
            harness.base + "/signet/v1/devices/debug",
            fields: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
            body: Array(body),
            sign: false
        )
    }

    @Test func anOperatorRegistersTheSimulatorsKeyAndItSignsAtTrustLevelDebug() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let keychain = MemoryValueStore()
        let provider = DebugDeviceProvider(store: keychain)

        // Not registered yet: the client's attempt to register again says what the operator runs.
        let early = try harness.client()
        try await early.start(with: provider)
        let unknown = await #expect(throws: SignetError.self) { _ = try await AppAttestLifecycleTests.post(early, harness.base) }
        #expect(unknown?.code == .unknownKey && unknown?.reason.contains("POST /signet/v1/devices/debug") == true, "\(String(describing: unknown))")
        #expect(try await provider.registrationCommand(gateway: harness.base).contains("/signet/v1/devices/debug"))

        #expect(try await Self.add(provider, to: harness, token: "not-the-token").reason == "admin_unauthorized")
        let added = try await Self.add(provider, to: harness)
        #expect(added.status == 201, "\(added.text)")
        #expect(added.json?["trustLevel"] as? String == "debug")
        let keyID = try await provider.keyID()
        #expect(added.json?["keyid"] as? String == keyID, "the device knows its key id without being told")
        #expect(try await Self.add(provider, to: harness).reason == "device_exists")

        // An `attested` route takes it; a route that names a platform does not.
        let client = try harness.client()
        try await client.start(with: provider)
        #expect(try await AppAttestLifecycleTests.post(client, harness.base).status == 201)
        let platform = try await client.send("GET", harness.base + "/attested/anything")
        #expect(platform.status == 403 && platform.reason == "trust_level_insufficient")

        // A relaunch: the same key from the Keychain, nothing registered again.
        let relaunched = try harness.client()
        try await relaunched.start(with: DebugDeviceProvider(store: keychain))
        #expect(try await AppAttestLifecycleTests.post(relaunched, harness.base).status == 201)
        let devices = try await harness.store.listDevices(DeviceListing(search: "", after: nil, limit: 10))
        #expect(devices.filter { $0.trustLevel == .debug }.count == 1)
        #expect(devices.first { $0.trustLevel == .debug }?.attributes["debug_name"] == "Ana's simulator")
        let audit = try await harness.store.auditRecords(before: nil, limit: 10)
        #expect(audit.contains { $0.action == "device.debug.add" })
    }

    /// A production gateway (no `allowDebugDevices`) neither registers debug devices nor takes the
    /// requests of one another gateway on the same store registered.
    @Test func aGatewayThatAllowsNoDebugDevicesRefusesThemEverywhere() async throws {
        let harness = try await Self.gateway(allowDebugDevices: false)
        Cleanup.after { try await harness.stop() }
        let provider = DebugDeviceProvider(store: MemoryValueStore())
        let refused = try await Self.add(provider, to: harness)
        #expect(refused.status == 403 && refused.reason == "trust_level_insufficient")

        let key = try VerificationKey(jwk: try await provider.publicKeyJWK())
        try await harness.store.registerDevice(try DebugDeviceRegistration(name: "staging's", key: key).record(now: Date()))
        let client = try harness.client()
        try await client.start(with: provider)
        let answer = try await client.send(
            "POST", harness.base + "/scores", fields: [("Content-Type", "application/json")], body: Array(#"{"name":"x","score":1}"#.utf8))
        #expect(answer.status == 403 && answer.reason == "trust_level_insufficient")
    }

    @Test func aDebugDeviceRegistrationIsCheckedBeforeAnythingIsStored() throws {
        let key = try SigningKey.generate(.p256).verificationKey
        #expect(throws: SignetError(.malformedMessage, "")) { try DebugDeviceRegistration(name: "  ", key: key) }
        #expect(throws: SignetError(.malformedMessage, "")) { try DebugDeviceRegistration(name: "a\u{7}b", key: key) }
        #expect(throws: SignetError(.malformedMessage, "")) { try DebugDeviceRegistration(name: String(repeating: "n", count: 81), key: key) }
        #expect(throws: SignetError(.algMismatch, "")) { try DebugDeviceRegistration(name: "ci", algorithm: "ed25519", key: key) }
        #expect(throws: SignetError(.algUnsupported, "")) { try DebugDeviceRegistration(name: "ci", algorithm: "hmac-sha256", key: key) }
        #expect(throws: SignetError(.malformedMessage, "")) { try DebugDeviceRegistration(name: "ci", publicKeyText: "not a key") }
        let pem = try DebugDeviceRegistration(name: "ci", publicKeyText: key.pemRepresentation!)
        let jwk = try DebugDeviceRegistration(name: "ci", publicKeyText: key.jwk.jsonString)
        #expect(try pem.record(now: Date()).keyID == jwk.record(now: Date()).keyID)
        #expect(try pem.record(now: Date()).trustLevel == .debug && pem.algorithm == "ecdsa-p256-sha256")
    }
}
