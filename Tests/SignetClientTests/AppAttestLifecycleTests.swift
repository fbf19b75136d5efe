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
/// reinstall, restore, `serverUnavailable` then success, every other error, an app extension, an
/// unsupported device, concurrent registrations and requests, an attestation kept across a failed
/// delivery, and a key that stopped being valid.
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

    @Test func aKeyThatStoppedBeingValidIsForgottenAndTheClientRegistersAgainAndResends() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let service = Self.service()
        let keychain = MemoryValueStore()
        let lifecycle = AppAttestLifecycle(service: service, store: keychain)
        let client = try harness.client()
        let first = try await client.register(using: lifecycle)
        try await service.forgetKeys()  // a restore onto a new phone: the Keychain came along, the key did not
        #expect(try await Self.post(client, harness.base).status == 201)
        let second = try #require(try await lifecycle.registeredDevice())
        #expect(second.keyID != first.keyID && service.keyCount == 1)
        #expect(service.calls == [.generateKey, .attestKey, .generateAssertion, .generateKey, .attestKey, .generateAssertion])
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

/// The lifecycle's answers to what happens to phones: launches, reinstalls and restores, errors,
/// extensions, and many things at once.
@Suite(.awaitsCleanups) struct AppAttestLifecycleEventsTests {
    /// `DCAppAttestService` whose every call takes a little time, counting how many run at once:
    /// the actor alone would let them overlap at every `await`.
    final class OverlapProbe: AppAttestService {
        let inner: SimulatedAppAttestService
        private let running = Mutex<(now: Int, most: Int)>((0, 0))
        init(_ inner: SimulatedAppAttestService) { self.inner = inner }
        var mostAtOnce: Int { running.withLock { $0.most } }
        var isSupported: Bool { inner.isSupported }
        private func around<T>(_ body: () async throws -> T) async throws -> T {
            running.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            defer { running.withLock { $0.now -= 1 } }
            try await Task.sleep(for: .milliseconds(3))
            return try await body()
        }
        func generateKey() async throws -> String { try await around { try await inner.generateKey() } }
        func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
            try await around { try await inner.attestKey(keyID, clientDataHash: clientDataHash) }
        }
        func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
            try await around { try await inner.generateAssertion(keyID, clientDataHash: clientDataHash) }
        }
    }

    /// A copy of a Keychain, as a backup restored onto another phone carries it.
    static func copy(_ keychain: MemoryValueStore) async throws -> MemoryValueStore {
        let copy = MemoryValueStore()
        try await copy.set(try await keychain.value(for: "signet.app-attest.state"), for: "signet.app-attest.state")
        return copy
    }

    @Test func startRegistersAtTheFirstLaunchAndRestoresAtEveryLaunchAfter() async throws {
        let harness = try await AppAttestLifecycleTests.gateway()
        Cleanup.after { try await harness.stop() }
        let service = AppAttestLifecycleTests.service()
        let keychain = MemoryValueStore()
        let first = try harness.client()
        try await first.start(with: AppAttestLifecycle(service: service, store: keychain))
        #expect(try await AppAttestLifecycleTests.post(first, harness.base).status == 201)
        let relaunched = try harness.client()
        try await relaunched.start(with: AppAttestLifecycle(service: service, store: keychain))
        #expect(try await AppAttestLifecycleTests.post(relaunched, harness.base).status == 201)
        #expect(service.keyCount == 1 && service.calls == [.generateKey, .attestKey, .generateAssertion, .generateAssertion])
    }

    /// The simulated service with a store (the simulator's Keychain) keeps its keys and counters
    /// as the Secure Enclave does: a relaunch signs with the key attested at the first launch.
    @Test func theSimulatedServiceKeepsItsKeysAcrossARelaunchGivenAStore() async throws {
        let harness = try await AppAttestLifecycleTests.gateway()
        Cleanup.after { try await harness.stop() }
        let keychain = MemoryValueStore()
        let first = SimulatedAppAttestService(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, store: keychain)
        let client = try harness.client()
        try await client.start(with: AppAttestLifecycle(service: first, store: keychain))
        #expect(try await AppAttestLifecycleTests.post(client, harness.base).status == 201)

        // A new process: a new service over the same Keychain, no key made or attested.
        let relaunched = SimulatedAppAttestService(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, store: keychain)
        let again = try harness.client()
        try await again.start(with: AppAttestLifecycle(service: relaunched, store: keychain))
        #expect(try await AppAttestLifecycleTests.post(again, harness.base, score: 2).status == 201)
        #expect(try await AppAttestLifecycleTests.post(again, harness.base, score: 3).status == 201, "the counter went on from the kept one")
        #expect(relaunched.calls == [.generateAssertion, .generateAssertion])
        // Without a store, the keys die with the process: the lifecycle registers again.
        let forgetful = SimulatedAppAttestService(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        let third = try harness.client()
        try await third.start(with: AppAttestLifecycle(service: forgetful, store: keychain))
        #expect(try await AppAttestLifecycleTests.post(third, harness.base, score: 4).status == 201)
        #expect(forgetful.calls == [.generateAssertion, .generateKey, .attestKey, .generateAssertion])
    }

    /// A reinstall keeps the Keychain (iOS does) but not the App Attest key; a restore onto another
    /// phone brings the Keychain to a device that never had the key. Either way the first request
    /// finds the key gone, and the client registers again and sends it, once, without the app.
    @Test(arguments: ["reinstall", "restore"])
    func afterAReinstallOrARestoreTheFirstRequestRegistersAgainInsideTheClient(_ event: String) async throws {
        let harness = try await AppAttestLifecycleTests.gateway()
        Cleanup.after { try await harness.stop() }
        let original = AppAttestLifecycleTests.service()
        let keychain = MemoryValueStore()
        let before = try harness.client()
        try await before.start(with: AppAttestLifecycle(service: original, store: keychain))
        let device = try #require(await before.device)

        let service: SimulatedAppAttestService
        let kept: MemoryValueStore
        if event == "reinstall" {
            try await original.forgetKeys()
            (service, kept) = (original, keychain)
        } else {
            (service, kept) = (AppAttestLifecycleTests.service(), try await Self.copy(keychain))
        }
        let calls = service.calls.count
        let after = try harness.client()
        let lifecycle = AppAttestLifecycle(service: service, store: kept)
        try await after.start(with: lifecycle)
        #expect(service.calls.count == calls, "the launch restores without calling App Attest")
        #expect(try await AppAttestLifecycleTests.post(after, harness.base, score: 3).status == 201)
        #expect(Array(service.calls.dropFirst(calls)) == [.generateAssertion, .generateKey, .attestKey, .generateAssertion])
        let registered = try #require(try await lifecycle.registeredDevice())
        #expect(registered.deviceID != device.deviceID)
        // The next request signs with the new key at once.
        #expect(try await AppAttestLifecycleTests.post(after, harness.base, score: 4).status == 201)
    }

    /// Every error but `serverUnavailable` discards the key: the next try starts clean, rather
    /// than failing the same way at every launch (firebase-ios-sdk#12468).
    @Test(arguments: [AppAttestServiceError.Kind.invalidInput, .systemFailure, .unsupported])
    func everyOtherErrorWhileAttestingDiscardsTheKey(_ kind: AppAttestServiceError.Kind) async throws {
        let harness = try await AppAttestLifecycleTests.gateway()
        Cleanup.after { try await harness.stop() }
        let service = AppAttestLifecycleTests.service()
        service.fail(.attestKey, with: kind)
        let keychain = MemoryValueStore()
        let lifecycle = AppAttestLifecycle(service: service, store: keychain)
        let client = try harness.client()
        await #expect(throws: AppAttestServiceError(kind)) { try await client.register(using: lifecycle) }
        #expect(try await keychain.value(for: "signet.app-attest.state") == nil, "nothing kept")
        try await client.register(using: lifecycle)
        #expect(service.keyCount == 2 && service.calls == [.generateKey, .attestKey, .generateKey, .attestKey])
        #expect(try await AppAttestLifecycleTests.post(client, harness.base).status == 201)
    }

    @Test(arguments: [AppAttestServiceError.Kind.invalidKey, .invalidInput, .systemFailure])
    func everyErrorButServerUnavailableWhileAssertingRegistersAgain(_ kind: AppAttestServiceError.Kind) async throws {
        let harness = try await AppAttestLifecycleTests.gateway()
        Cleanup.after { try await harness.stop() }
        let service = AppAttestLifecycleTests.service()
        let client = try harness.client()
        try await client.start(with: AppAttestLifecycle(service: service, store: MemoryValueStore()))
        service.fail(.generateAssertion, with: kind)
        #expect(try await AppAttestLifecycleTests.post(client, harness.base).status == 201)
        #expect(service.calls == [.generateKey, .attestKey, .generateAssertion, .generateKey, .attestKey, .generateAssertion])

        // Once per request: a key that cannot assert twice in a row reaches the app.
        service.fail(.generateAssertion, with: kind, kind)
        let error = await #expect(throws: SignetError.self) { _ = try await AppAttestLifecycleTests.post(client, harness.base) }
        #expect(error?.code == .invalidKey)
    }

    @Test func concurrentRegistrationsAttestOnceAndNoTwoServiceCallsOverlap() async throws {
        let harness = try await AppAttestLifecycleTests.gateway(counterWindow: 16)
        Cleanup.after { try await harness.stop() }
        let probe = OverlapProbe(AppAttestLifecycleTests.service())
        let lifecycle = AppAttestLifecycle(service: probe, store: MemoryValueStore())
        let client = try harness.client(timeout: .seconds(60))
        // Two parts of the app register at launch, at once.
        let devices = try await withThrowingTaskGroup(of: RegisteredDevice.self) { group in
            for _ in 0..<4 { group.addTask { try await client.register(using: lifecycle) } }
            return try await group.reduce(into: Set<RegisteredDevice>()) { $0.insert($1) }
        }
        #expect(devices.count == 1)
        #expect(probe.inner.calls == [.generateKey, .attestKey])
        // Requests at once: assertions one at a time, every one accepted within the window.
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask { try await AppAttestLifecycleTests.post(client, harness.base, score: index).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 201, count: 8))
        // Registrations, assertions and a reset called at once on the lifecycle itself.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<6 {
                group.addTask {
                    if index == 3 { try await lifecycle.reset() }
                    _ = try await lifecycle.registration(challenge: "challenge-\(index)")
                }
            }
            try await group.waitForAll()
        }
        #expect(probe.mostAtOnce == 1)
    }

    /// A made attestation is not thrown away because its POST did not get through: the key is
    /// attested once, so the same attestation and challenge go again while the challenge is valid.
    @Test func anAttestationIsKeptAcrossAFailedDeliveryWhileItsChallengeIsValid() async throws {
        let harness = try await AppAttestLifecycleTests.gateway()
        Cleanup.after { try await harness.stop() }
        let service = AppAttestLifecycleTests.service()
        let keychain = MemoryValueStore()
        let client = try harness.client()
        func challenge() async throws -> String {
            let answer = try await client.send("POST", harness.base + "/signet/v1/challenges", sign: false)
            return try #require(answer.json?["challenge"] as? String)
        }
        let lifecycle = AppAttestLifecycle(service: service, store: keychain)
        let made = try await lifecycle.registration(for: IssuedChallenge(value: try await challenge(), expiresAt: Date() + 300))
        // The POST failed (no network) and the app was killed; at the next launch, a new challenge.
        let relaunched = AppAttestLifecycle(service: service, store: keychain)
        let again = try await relaunched.registration(for: IssuedChallenge(value: try await challenge(), expiresAt: Date() + 300))
        #expect(again.body == made.body && again.path == made.path)
        #expect(service.calls == [.generateKey, .attestKey])
        let answer = try await client.send(
            "POST", harness.base + again.path, fields: [("Content-Type", "application/json")], body: again.body, sign: false)
        #expect(answer.status == 201)

        // Past its challenge's life (less the time to travel), a new key: never a proof the gateway refuses.
        let late = AppAttestLifecycle(service: service, store: MemoryValueStore(), now: { Date() + 295 })
        let old = try await late.registration(for: IssuedChallenge(value: "spent", expiresAt: Date() + 300))
        let fresh = try await late.registration(for: IssuedChallenge(value: try await challenge(), expiresAt: Date() + 600))
        #expect(old.body != fresh.body && service.keyCount == 3)
        // A refusal spends it too.
        let refused = AppAttestLifecycle(service: service, store: MemoryValueStore())
        let first = try await refused.registration(for: IssuedChallenge(value: "one", expiresAt: Date() + 300))
        await refused.registrationRefused(SignetError(.challengeUnknown, "used"))
        #expect(try await refused.registration(for: IssuedChallenge(value: "two", expiresAt: Date() + 300)).body != first.body)
    }

    /// A client certificate that does not load is the transport's failure, not a sign that the
    /// device key is gone: nothing is reset, no key is attested again.
    @Test func aTransportFailureNeverCostsTheRegistration() async throws {
        let harness = try await AppAttestLifecycleTests.gateway()
        Cleanup.after { try await harness.stop() }
        let service = AppAttestLifecycleTests.service()
        let lifecycle = AppAttestLifecycle(service: service, store: MemoryValueStore())
        let client = try harness.client()
        try await client.start(with: lifecycle)
        let device = try await lifecycle.registeredDevice()
        await client.closeConnections()
        let fresh = try harness.client()
        try await fresh.start(with: lifecycle)
        try await fresh.useClientIdentity(ClientIdentity(certificateChainPEM: "not a chain", privateKeyPEM: "not a key"))
        let error = await #expect(throws: SignetError.self) { _ = try await AppAttestLifecycleTests.post(fresh, harness.base) }
        #expect(error?.code == .invalidKey)
        #expect(try await lifecycle.registeredDevice() == device)
        #expect(service.keyCount == 1 && !service.calls.dropFirst(2).contains(.generateKey))
    }

    /// App Attest cannot generate keys in an app extension, whatever `isSupported` says; and an
    /// extension sharing the app's Keychain group must never wipe the app's registration.
    @Test func anAppExtensionNeitherRegistersNorWritesTheAppsState() async throws {
        let harness = try await AppAttestLifecycleTests.gateway()
        Cleanup.after { try await harness.stop() }
        let service = AppAttestLifecycleTests.service()
        let keychain = MemoryValueStore()
        let app = AppAttestLifecycle(service: service, store: keychain)
        let device = try await harness.client().register(using: app)
        let kept = try await keychain.value(for: "signet.app-attest.state")

        let extensionLifecycle = AppAttestLifecycle(service: service, store: keychain, inAppExtension: true)
        let refused = await #expect(throws: SignetError.self) { try await harness.client().register(using: extensionLifecycle) }
        #expect(refused?.code == .algUnsupported)
        await #expect(throws: SignetError.self) { try await extensionLifecycle.reset() }
        // The extension signs with the app's key; when that fails, it throws and keeps the state.
        let client = try harness.client()
        await client.useSigner(try #require(try await extensionLifecycle.restoredSigner()))
        #expect(try await AppAttestLifecycleTests.post(client, harness.base).status == 201)
        service.fail(.generateAssertion, with: .invalidKey)
        let error = await #expect(throws: SignetError.self) { _ = try await AppAttestLifecycleTests.post(client, harness.base) }
        #expect(error?.code == .invalidKey)
        #expect(try await keychain.value(for: "signet.app-attest.state") == kept)
        #expect(try await app.registeredDevice() == device)
    }

    /// An erased and restored phone brings back the Keychain's Secure Enclave key blob, which the
    /// new enclave cannot open: a new key and a new registration, not an error at every launch.
    @Test func aDeviceKeyThatNoLongerOpensLeadsToANewKey() async throws {
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await harness.stop() }
        let factory = ErasableKeyFactory()
        let keychain = MemoryValueStore()
        let first = try harness.client()
        try await first.start(with: DeviceKeyProvider(factory: factory, store: keychain))
        let device = try #require(await first.device)
        #expect(try await AppAttestLifecycleTests.post(first, harness.base).status == 201)

        factory.erase()
        let relaunched = try harness.client()
        try await relaunched.start(with: DeviceKeyProvider(factory: factory, store: keychain))
        #expect(try await AppAttestLifecycleTests.post(relaunched, harness.base).status == 201)
        #expect(try #require(await relaunched.device).keyID != device.keyID)
        // And at the launch after that, the new key restores.
        let third = try harness.client()
        try await third.start(with: DeviceKeyProvider(factory: factory, store: keychain))
        #expect(await third.device == nil, "restored, not registered")
        #expect(try await AppAttestLifecycleTests.post(third, harness.base).status == 201)
    }
}

/// A device key provider in an app extension (read-only): it signs with the app's key, and never
/// makes, discards or resets what the app keeps in the shared Keychain group.
@Suite struct ReadOnlyDeviceKeyProviderTests {
    @Test func anExtensionSignsWithTheAppsKeyAndNeverWritesTheKeychain() async throws {
        let factory = ErasableKeyFactory()
        let keychain = MemoryValueStore()
        let app = DeviceKeyProvider(factory: factory, store: keychain, readOnly: false)
        _ = try await app.registration(challenge: "c")
        _ = try await app.signer(for: RegisteredDevice(deviceID: "dev_1", keyID: "k1"))
        let kept = try await keychain.value(for: "signet.device-key")

        let extensionProvider = DeviceKeyProvider(factory: factory, store: keychain, readOnly: true)
        #expect(try await extensionProvider.restoredSigner() != nil)
        await #expect(throws: SignetError.self) { try await extensionProvider.reset() }
        factory.erase()
        let error = await #expect(throws: SignetError.self) { _ = try await extensionProvider.restoredSigner() }
        #expect(error?.code == .invalidKey)
        #expect(try await keychain.value(for: "signet.device-key") == kept, "the app's key is still kept")
        #expect(try await keychain.value(for: "signet.device-key.registration") != nil)
        let empty = DeviceKeyProvider(factory: factory, store: MemoryValueStore(), readOnly: true)
        await #expect(throws: SignetError.self) { _ = try await empty.registration(challenge: "c") }
    }
}

/// Software keys whose kept blobs stop opening after ``erase()``, as a Secure Enclave's do after
/// an erase and restore.
final class ErasableKeyFactory: DeviceKeyFactory {
    private let erased = Mutex<Set<Data>>([])
    private let made = Mutex<Set<Data>>([])

    func erase() { erased.withLock { $0.formUnion(made.withLock { $0 }) } }

    func make() throws -> (key: any DeviceSigningKey, kept: Data) {
        let key = try SoftwareKeyFactory().make()
        made.withLock { _ = $0.insert(key.kept) }
        return key
    }

    func restore(_ kept: Data) throws -> any DeviceSigningKey {
        guard !erased.withLock({ $0.contains(kept) }) else { throw SignetError(.invalidKey, "the enclave cannot open this key") }
        return try SoftwareKeyFactory().restore(kept)
    }
}
