// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore

/// `DCAppAttestService` in software, for the SDK's lifecycle (`AppAttestLifecycle`)
/// in tests and on the iOS simulator, where App Attest does not run: keys are
/// ``SimulatedAppAttestDevice``s under one ``DevelopmentAttestationCA`` (trust its root on a
/// development gateway), and every `DCError` the lifecycle handles can be scripted.
///
/// As Apple's service does: a key is attested at most once (again: `invalidKey`), an unknown or
/// invalidated key is `invalidKey`, and nothing works where `isSupported` is false.
public final class SimulatedAppAttestService: AppAttestService {
    public enum Operation: Sendable, Hashable { case generateKey, attestKey, generateAssertion }

    private struct State {
        var devices: [String: SimulatedAppAttestDevice] = [:]
        var attested: Set<String> = []
        var scripted: [Operation: [AppAttestServiceError.Kind]] = [:]
        var calls: [Operation] = []
    }

    public let appID: String
    public let ca: DevelopmentAttestationCA
    public let isSupported: Bool
    private let state = Locked(State())

    public init(appID: String, ca: DevelopmentAttestationCA, isSupported: Bool = true) {
        self.appID = appID
        self.ca = ca
        self.isSupported = isSupported
    }

    /// The next calls of `operation` fail with these errors, one each, in order.
    public func fail(_ operation: Operation, with kinds: AppAttestServiceError.Kind...) {
        state.withLock { $0.scripted[operation, default: []] += kinds }
    }

    /// Every key is forgotten, as when a reinstall restores a Keychain whose key ids the Secure
    /// Enclave no longer holds.
    public func forgetKeys() {
        state.withLock { $0.devices = [:] }
    }

    /// The calls made so far, in order.
    public var calls: [Operation] { state.withLock { $0.calls } }
    /// The keys generated so far.
    public var keyCount: Int { state.withLock { $0.devices.count } }

    public func generateKey() async throws -> String {
        try begin(.generateKey)
        let device = SimulatedAppAttestDevice(appID: appID, ca: ca)
        state.withLock { $0.devices[device.keyID] = device }
        return device.keyID
    }

    public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try begin(.attestKey)
        let device = try state.withLock { state -> SimulatedAppAttestDevice in
            guard let device = state.devices[keyID], state.attested.insert(keyID).inserted else {
                throw AppAttestServiceError(.invalidKey, "unknown key, or attested already")
            }
            return device
        }
        return Data(try device.attest(clientDataHash: Array(clientDataHash)))
    }

    public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try begin(.generateAssertion)
        guard let device = state.withLock({ $0.devices[keyID] }) else {
            throw AppAttestServiceError(.invalidKey, "unknown key")
        }
        return Data(try device.assertion(clientDataHash: Array(clientDataHash)))
    }

    private func begin(_ operation: Operation) throws {
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
