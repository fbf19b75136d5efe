// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetAppAttest
import SignetClient
import SignetCore

/// `DCAppAttestService` in software, for the SDK's lifecycle (`AppAttestLifecycle`)
/// in tests and on the iOS simulator, where App Attest does not run: keys are
/// ``SimulatedAppAttestDevice``s under one ``DevelopmentAttestationCA`` (trust its root on a
/// development gateway), and every `DCError` the lifecycle handles can be scripted.
///
/// As Apple's service does: a key is attested at most once (again: `invalidKey`), an unknown or
/// invalidated key is `invalidKey`, and nothing works where `isSupported` is false. Given a store
/// (the Keychain, in the simulator), its keys and counters survive a relaunch as the Secure
/// Enclave's do; without one they live as long as the process.
public final class SimulatedAppAttestService: AppAttestService {
    public enum Operation: Sendable, Hashable { case generateKey, attestKey, generateAssertion }

    private struct State {
        var devices: [String: SimulatedAppAttestDevice] = [:]
        var attested: Set<String> = []
        var scripted: [Operation: [AppAttestServiceError.Kind]] = [:]
        var calls: [Operation] = []
        /// Whether the kept keys were read from the store yet.
        var restored = false
    }

    /// The keys as kept in the store.
    private struct Kept: Codable {
        var devices: [String: SimulatedAppAttestDevice.Kept] = [:]
        var attested: Set<String> = []
    }

    public let appID: String
    public let ca: DevelopmentAttestationCA
    public let isSupported: Bool
    /// Where the keys are kept across launches; `nil`: in memory only.
    public let store: (any SecureValueStore)?
    private let state = Locked(State())

    static let storeName = "signet.simulated-app-attest"

    public init(appID: String, ca: DevelopmentAttestationCA, isSupported: Bool = true, store: (any SecureValueStore)? = nil) {
        self.appID = appID
        self.ca = ca
        self.isSupported = isSupported
        self.store = store
    }

    /// The next calls of `operation` fail with these errors, one each, in order.
    public func fail(_ operation: Operation, with kinds: AppAttestServiceError.Kind...) {
        state.withLock { $0.scripted[operation, default: []] += kinds }
    }

    /// Every key is forgotten, as when a reinstall restores a Keychain whose key ids the Secure
    /// Enclave no longer holds (the kept ones too).
    public func forgetKeys() async throws {
        state.withLock {
            $0.devices = [:]
            $0.restored = true
        }
        try await store?.set(nil, for: Self.storeName)
    }

    /// The calls made so far, in order.
    public var calls: [Operation] { state.withLock { $0.calls } }
    /// The keys generated so far.
    public var keyCount: Int { state.withLock { $0.devices.count } }

    public func generateKey() async throws -> String {
        try await begin(.generateKey)
        let device = SimulatedAppAttestDevice(appID: appID, ca: ca)
        state.withLock { $0.devices[device.keyID] = device }
        try await keep()
        return device.keyID
    }

    public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await begin(.attestKey)
        let device = try state.withLock { state -> SimulatedAppAttestDevice in
            guard let device = state.devices[keyID], state.attested.insert(keyID).inserted else {
                throw AppAttestServiceError(.invalidKey, "unknown key, or attested already")
            }
            return device
        }
        try await keep()
        return Data(try device.attest(clientDataHash: Array(clientDataHash)))
    }

    public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await begin(.generateAssertion)
        guard let device = state.withLock({ $0.devices[keyID] }) else {
            throw AppAttestServiceError(.invalidKey, "unknown key")
        }
        let assertion = Data(try device.assertion(clientDataHash: Array(clientDataHash)))
        try await keep()
        return assertion
    }

    /// Reads the kept keys, once, before the first call uses them.
    private func restore() async throws {
        guard let store, !state.withLock({ $0.restored }) else { return }
        let kept = try await store.value(for: Self.storeName).flatMap { try? JSONDecoder().decode(Kept.self, from: $0) } ?? Kept()
        let devices = try kept.devices.mapValues {
            try SimulatedAppAttestDevice(appID: appID, environment: .development, ca: ca, kept: $0)
        }
        state.withLock { state in
            guard !state.restored else { return }
            state.devices.merge(devices) { current, _ in current }
            state.attested.formUnion(kept.attested)
            state.restored = true
        }
    }

    /// Writes the keys and counters to the store (after every change, as the enclave keeps them).
    private func keep() async throws {
        guard let store else { return }
        let kept = state.withLock { state in
            Kept(devices: state.devices.mapValues(\.kept), attested: state.attested)
        }
        try await store.set(try JSONEncoder().encode(kept), for: Self.storeName)
    }

    private func begin(_ operation: Operation) async throws {
        try await restore()
        guard isSupported else { throw AppAttestServiceError(.unsupported, "App Attest is not supported here") }
        let failure = state.withLock { state -> AppAttestServiceError.Kind? in
            state.calls.append(operation)
            guard var pending = state.scripted[operation], !pending.isEmpty else { return nil }
            let next = pending.removeFirst()
            state.scripted[operation] = pending
            return next
        }
        if let failure { throw AppAttestServiceError(failure, "scripted") }
    }
}
