// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetStore
import SignetTestSupport
import Testing

/// A device key made once, kept in the (here simulated) Keychain, registered with proof of
/// possession, and found again at every launch: the server's device record stays the app's.
@Suite(.awaitsCleanups) struct DeviceKeyProviderTests {
    static func post(_ client: SignetClient, _ base: String) async throws -> Int {
        try await client.send(
            "POST",
            base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array(#"{"name":"Enkidu","score":5}"#.utf8)
        ).status
    }

    @Test func aKeptKeyRegistersOnceAndSignsAfterEveryRelaunch() async throws {
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await harness.stop() }
        let keychain = MemoryValueStore()
        let client = try harness.client()
        let device = try await client.register(using: DeviceKeyProvider(factory: SoftwareKeyFactory(), store: keychain))
        #expect(try await Self.post(client, harness.base) == 201)
        #expect(try await keychain.value(for: "signet.device-key") != nil)

        // Relaunch: a new provider over the same Keychain finds the same key; no registration.
        let relaunched = DeviceKeyProvider(factory: SoftwareKeyFactory(), store: keychain)
        let again = try harness.client()
        await again.useSigner(try await relaunched.signer(for: device))
        #expect(try await Self.post(again, harness.base) == 201)
        let stored = try #require(try await harness.store.device(id: device.deviceID))
        #expect(stored.keyID == device.keyID && stored.trustLevel == .deviceKey)

        // Reset: the key is forgotten; another registration makes another device.
        try await relaunched.reset()
        let other = try await harness.client().register(using: relaunched)
        #expect(other.keyID != device.keyID)
    }

    @Test func aSignatureByAnotherKeyUnderTheKeptKeyIDIsRefused() async throws {
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await harness.stop() }
        let client = try harness.client()
        let device = try await client.register(using: DeviceKeyProvider(factory: SoftwareKeyFactory(), store: MemoryValueStore()))
        // Another install's key, claiming this device's key id: the signature does not verify.
        let impostor = try await DeviceKeyProvider(factory: SoftwareKeyFactory(), store: MemoryValueStore()).signer(for: device)
        await client.useSigner(impostor)
        let answer = try await client.send(
            "POST",
            harness.base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array("{}".utf8)
        )
        #expect(answer.status == 401 && answer.reason == "signature_invalid", "\(answer.text)")
    }
}
