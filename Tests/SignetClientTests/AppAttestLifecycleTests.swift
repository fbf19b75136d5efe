// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetSimulator
import SignetTestSupport
import Synchronization
import Testing

/// App Attest's key lifecycle against a real gateway, with the simulated service standing in for
/// `DCAppAttestService` (each `DCError` scripted as Apple documents it): first launch, relaunch,
/// `serverUnavailable` then success, `invalidKey` then recovery, an unsupported device, concurrent
/// requests, and a key that stopped being valid.
@Suite(.awaitsCleanups) struct AppAttestLifecycleTests {
    static func gateway(counterWindow: Int = 0) async throws -> GatewayHarness {
        try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) {
            $0.appAttest?.counterWindow = counterWindow
            $0.routes.insert(.init(prefix: "/scores", access: .appAttest), at: 0)
        }
    }

    static func service(supported: Bool = true) -> SimulatedAppAttestService {
        SimulatedAppAttestService(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, isSupported: supported)
    }

    /// Records the backoff instead of waiting it.
    final class Sleeps: Sendable {
        let taken = Mutex<[Duration]>([])
        var values: [Duration] { taken.withLock { $0 } }
        func sleep(_ duration: Duration) async throws { taken.withLock { $0.append(duration) } }
    }

    static func post(_ client: SignetClient, _ base: String, score: Int = 100) async throws -> ClientResponse {
        try await client.send(
            "POST",
            base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array(#"{"name":"Gilgamesh","score":\#(score)}"#.utf8)
        )
    }

    @Test func theFirstLaunchAttestsOnceAndEveryLaunchAfterSignsWithTheKeptKey() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let service = Self.service()
        let keychain = MemoryValueStore()

        let first = try harness.client()
        let lifecycle = AppAttestLifecycle(service: service, store: keychain)
        #expect(try await lifecycle.restoredSigner() == nil)
        let device = try await first.register(using: lifecycle)
        #expect(try await Self.post(first, harness.base).status == 201)
        #expect(service.calls == [.generateKey, .attestKey, .generateAssertion])

        // Relaunch: a new client and lifecycle over the same Keychain; no key made, none attested.
        let second = try harness.client()
        let relaunched = AppAttestLifecycle(service: service, store: keychain)
        #expect(try await relaunched.registeredDevice() == device)
        await second.useSigner(try #require(try await relaunched.restoredSigner()))
        #expect(try await Self.post(second, harness.base, score: 101).status == 201)
        #expect(service.keyCount == 1 && service.calls.filter { $0 != .generateAssertion } == [.generateKey, .attestKey])
    }

    @Test func serverUnavailableIsRetriedWithTheSameKeyAndDataWithBackoff() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let service = Self.service()
        service.fail(.attestKey, with: .serverUnavailable, .serverUnavailable)
        let sleeps = Sleeps()
        let lifecycle = AppAttestLifecycle(
            service: service,
            store: MemoryValueStore(),
            retry: .init(attempts: 4, initialDelay: .milliseconds(100)),
            sleep: sleeps.sleep
        )
        let client = try harness.client()
        try await client.register(using: lifecycle)
        #expect(service.keyCount == 1 && service.calls == [.generateKey, .attestKey, .attestKey, .attestKey])
        #expect(sleeps.values == [.milliseconds(100), .milliseconds(200)])
        #expect(try await Self.post(client, harness.base).status == 201)

        // Past the attempts, the error reaches the app and nothing is registered.
        let stubborn = Self.service()
        stubborn.fail(.attestKey, with: .serverUnavailable, .serverUnavailable)
        let giving = AppAttestLifecycle(service: stubborn, store: MemoryValueStore(), retry: .init(attempts: 2), sleep: Sleeps().sleep)
        await #expect(throws: AppAttestServiceError(.serverUnavailable)) { try await harness.client().register(using: giving) }
        #expect(try await giving.registeredDevice() == nil)
    }

    @Test func invalidKeyDiscardsTheKeyAndStartsOverOnce() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let service = Self.service()
        service.fail(.attestKey, with: .invalidKey)
        let lifecycle = AppAttestLifecycle(service: service, store: MemoryValueStore())
        let client = try harness.client()
        try await client.register(using: lifecycle)
        #expect(service.keyCount == 2 && service.calls == [.generateKey, .attestKey, .generateKey, .attestKey])
        #expect(try await Self.post(client, harness.base).status == 201)

        // Twice in a row: once is the bargain, then the error reaches the app.
        let twice = Self.service()
        twice.fail(.attestKey, with: .invalidKey, .invalidKey)
        await #expect(throws: AppAttestServiceError(.invalidKey)) {
            try await harness.client().register(using: AppAttestLifecycle(service: twice, store: MemoryValueStore()))
        }
    }

    @Test func aKeyThatStoppedBeingValidIsForgottenAndTheAppRegistersAgain() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let service = Self.service()
        let keychain = MemoryValueStore()
        let lifecycle = AppAttestLifecycle(service: service, store: keychain)
        let client = try harness.client()
        try await client.register(using: lifecycle)
        service.forgetKeys()  // a restore onto a new phone: the Keychain came along, the key did not
        let error = await #expect(throws: SignetError.self) { _ = try await Self.post(client, harness.base) }
        #expect(error?.code == .invalidKey)
        #expect(try await lifecycle.registeredDevice() == nil)
        try await client.register(using: lifecycle)
        #expect(try await Self.post(client, harness.base).status == 201)
        // A registration that never reached the server leaves an attested key: the next one makes a new key.
        func challenge() async throws -> String {
            let answer = try await client.send("POST", harness.base + "/signet/v1/challenges", sign: false)
            return try #require(answer.json?["challenge"] as? String)
        }
        let keys = service.keyCount
        _ = try await lifecycle.registration(challenge: try await challenge())
        _ = try await lifecycle.registration(challenge: try await challenge())
        #expect(service.keyCount == keys + 2)
    }

    @Test func anUnsupportedDeviceRefusesOrFallsBackAsConfigured() async throws {
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await harness.stop() }
        let unsupported = Self.service(supported: false)
        let refusing = AppAttestLifecycle(service: unsupported, store: MemoryValueStore())
        let error = await #expect(throws: SignetError.self) { try await harness.client().register(using: refusing) }
        #expect(error?.code == .algUnsupported)

        let keychain = MemoryValueStore()
        // A device key kept in the same Keychain (the Secure Enclave's on a phone; software here).
        let fallbackKey = DeviceKeyProvider(factory: SoftwareKeyFactory(), store: keychain)
        let falling = AppAttestLifecycle(service: unsupported, store: keychain, fallback: .provider(fallbackKey))
        let client = try harness.client()
        let device = try await client.register(using: falling)
        #expect(try await Self.post(client, harness.base).status == 201)
        #expect(unsupported.calls.isEmpty, "App Attest was never called")
        // Relaunch: the fallback's signer for the kept device.
        let relaunched = AppAttestLifecycle(
            service: unsupported,
            store: keychain,
            fallback: .provider(DeviceKeyProvider(factory: SoftwareKeyFactory(), store: keychain))
        )
        #expect(try await relaunched.registeredDevice() == device)
        let again = try harness.client()
        await again.useSigner(try #require(try await relaunched.restoredSigner()))
        #expect(try await Self.post(again, harness.base, score: 7).status == 201)
    }

    /// Assertions are made one at a time, but concurrent requests can still reach the gateway out of
    /// order; with a counter window (as docs/ios.md asks of apps that send concurrently) every one
    /// is accepted, once.
    @Test func concurrentRequestsAreEachAcceptedWithACounterWindow() async throws {
        let harness = try await Self.gateway(counterWindow: 16)
        Cleanup.after { try await harness.stop() }
        let lifecycle = AppAttestLifecycle(service: Self.service(), store: MemoryValueStore())
        // The requests queue on one connection: each waits for those before it.
        let client = try harness.client(timeout: .seconds(60))
        try await client.register(using: lifecycle)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 { group.addTask { try await Self.post(client, harness.base, score: index).status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 201, count: 8))
    }
}

/// The debug provider: a development CA made once with `signet simulator-ca`, its root trusted by a
/// development gateway, its keys loaded by the app's debug builds.
@Suite(.awaitsCleanups) struct SimulatorCATests {
    @Test func aCAMadeByTheCLIIsTrustedByTheGatewayThatNamesItsRootAndNoOtherIs() async throws {
        let dir = try SignetProcess.temporaryDirectory()
        let made = try await SignetProcess.signet(["simulator-ca", "--out", dir.path])
        #expect(made.status == 0, "\(made.stderr)")
        let root = dir.appendingPathComponent("attestation-root.pem").path
        let bundle = dir.appendingPathComponent("attestation-ca.bundle.pem").path
        let permissions = try FileManager.default.attributesOfItem(atPath: bundle)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        #expect(try await SignetProcess.signet(["simulator-ca", "--out", dir.path]).status != 0, "no silent replacement")

        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) {
            $0.appAttest?.trustedRootsFile = root
            $0.routes.insert(.init(prefix: "/scores", access: .appAttest), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let ca = try DevelopmentAttestationCA(bundlePEM: try String(contentsOfFile: bundle, encoding: .utf8))
        let debug = SimulatedAppAttestService(appID: GatewayHarness.appID, ca: ca)
        let client = try harness.client()
        try await client.register(using: AppAttestLifecycle(service: debug, store: MemoryValueStore()))
        #expect(try await AppAttestLifecycleTests.post(client, harness.base).status == 201)

        // Another CA (another developer's, or a fresh simulator's): not trusted here.
        let stranger = SimulatedAppAttestService(appID: GatewayHarness.appID, ca: try DevelopmentAttestationCA())
        let error = await #expect(throws: SignetError.self) {
            try await harness.client().register(using: AppAttestLifecycle(service: stranger, store: MemoryValueStore()))
        }
        #expect(error?.code == .attestationChainInvalid)
    }
}
