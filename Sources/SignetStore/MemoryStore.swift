// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Synchronization

/// An in-process ``SignetStorage`` for tests and single-process tools. Nothing survives a restart.
public final class MemoryStore: SignetStorage {
    struct State {
        var devices: [String: DeviceRecord] = [:]
        var deviceIDByKeyID: [String: String] = [:]
        var pinReports: [String: PinReportRecord] = [:]
        /// ``CounterWindow/seen`` per device (the highest counter is the device's `counter`).
        var counterWindows: [String: UInt64] = [:]
        var accounts: [String: AccountRecord] = [:]
        var loginFailures: [String: LoginFailures] = [:]
        /// Per batch, when each device attested.
        var attestations: [String: [String: Date]] = [:]
        var secrets: [String: [UInt8]] = [:]
        var receipts: [String: ReceiptRecord] = [:]
        var console = ConsoleState()
    }

    let state = Mutex(State())
    private let nonces: MemoryNonceStore

    public init(nonceCapacity: Int = 1_000_000) {
        self.nonces = MemoryNonceStore(capacity: nonceCapacity)
    }

    public func registerDevice(_ device: DeviceRecord) async throws {
        try state.withLock { state in
            guard state.devices[device.deviceID] == nil, state.deviceIDByKeyID[device.keyID] == nil else {
                throw SignetError(.deviceExists, "a device with this id or key id exists")
            }
            if let user = device.user, state.accounts[user] == nil {
                throw SignetError(.credentialsInvalid, "the device's user no longer exists")
            }
            state.devices[device.deviceID] = device
            state.deviceIDByKeyID[device.keyID] = device.deviceID
            state.console.index(device)
        }
    }

    public func device(keyID: String) async throws -> DeviceRecord? {
        state.withLock { state in state.deviceIDByKeyID[keyID].flatMap { state.devices[$0] } }
    }

    public func device(id: String) async throws -> DeviceRecord? {
        state.withLock { $0.devices[id] }
    }

    public func revokeDevice(id: String, at time: Date) async throws -> Bool {
        state.withLock { state in
            guard state.devices[id] != nil else { return false }
            state.devices[id]!.status = .revoked
            state.devices[id]!.revokedAt = state.devices[id]!.revokedAt ?? time
            return true
        }
    }

    // MARK: Receipts

    public func saveReceipt(_ record: ReceiptRecord) async throws {
        state.withLock { state in
            if let stored = state.receipts[record.deviceID], stored.createdAt > record.createdAt { return }
            state.receipts[record.deviceID] = record
            state.devices[record.deviceID]?.riskMetric = record.riskMetric
        }
    }

    public func receipt(deviceID: String) async throws -> ReceiptRecord? {
        state.withLock { $0.receipts[deviceID] }
    }

    public func receiptsDue(at now: Date, limit: Int) async throws -> [ReceiptRecord] {
        state.withLock { state in
            state.receipts.values.filter {
                $0.refreshAt <= now && $0.expiresAt > now && state.devices[$0.deviceID]?.status == .active
            }
            .sorted { ($0.failures, $0.refreshAt, $0.deviceID) < ($1.failures, $1.refreshAt, $1.deviceID) }
            .prefix(limit).map { $0 }
        }
    }

    public func claimReceiptRefresh(deviceID: String, dueAt: Date, leaseUntil: Date) async throws -> Bool {
        state.withLock { state in
            guard state.receipts[deviceID]?.refreshAt == dueAt else { return false }
            state.receipts[deviceID]!.refreshAt = leaseUntil
            return true
        }
    }

    public func recordReceiptFailure(deviceID: String, error: String, retryAt: Date, leasedUntil: Date) async throws {
        state.withLock { state in
            guard state.receipts[deviceID]?.refreshAt == leasedUntil else { return }
            state.receipts[deviceID]!.failures += 1
            state.receipts[deviceID]!.lastError = error
            state.receipts[deviceID]!.refreshAt = retryAt
        }
    }

    // MARK: Accounts

    public func putAccount(_ account: AccountRecord) async throws -> Bool {
        state.withLock { state in
            var account = account
            let existing = state.accounts[account.name]
            if let existing { account.createdAt = existing.createdAt }
            state.accounts[account.name] = account
            return existing == nil
        }
    }

    public func account(name: String) async throws -> AccountRecord? {
        state.withLock { $0.accounts[name] }
    }

    public func listAccounts(after name: String?, limit: Int) async throws -> [AccountRecord] {
        // Byte order, as the databases compare names; every name is longer than "".
        let after = Array((name ?? "").utf8)
        return state.withLock { state in
            state.accounts.values.filter { after.lexicographicallyPrecedes($0.name.utf8) }
                .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                .prefix(max(0, limit)).map { $0 }
        }
    }

    public func account(userhash: String, algorithm: DigestAlgorithm) async throws -> AccountRecord? {
        state.withLock { state in state.accounts.values.first { $0.digests[algorithm]?.userhash == userhash } }
    }

    public func deleteAccount(name: String, at time: Date) async throws -> Bool {
        state.withLock { state in
            guard state.accounts.removeValue(forKey: name) != nil else { return false }
            for (id, device) in state.devices where device.user == name && device.status == .active {
                state.devices[id]!.status = .revoked
                state.devices[id]!.revokedAt = time
            }
            return true
        }
    }

    public func recordLoginFailure(subject: String, window: TimeInterval, now: Date) async throws -> LoginFailures {
        state.withLock { state in
            var failures = state.loginFailures[subject] ?? LoginFailures(count: 0, windowEnd: now)
            if failures.windowEnd <= now { failures = LoginFailures(count: 0, windowEnd: now.addingTimeInterval(window)) }
            failures.count += 1
            state.loginFailures[subject] = failures
            return failures
        }
    }

    public func loginFailures(subjects: [String], now: Date) async throws -> [String: LoginFailures] {
        state.withLock { state in
            var found: [String: LoginFailures] = [:]
            for subject in subjects {
                if let failures = state.loginFailures[subject], failures.windowEnd > now { found[subject] = failures }
            }
            return found
        }
    }

    public func clearLoginFailures(subject: String) async throws {
        _ = state.withLock { $0.loginFailures.removeValue(forKey: subject) }
    }

    public func serverSecret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8] {
        state.withLock { state in
            if let existing = state.secrets[name] { return existing }
            state.secrets[name] = proposed
            return proposed
        }
    }

    // MARK: Pin reports

    public func recordPinReport(_ report: PinReportRecord, limit: Int) async throws -> Int {
        state.withLock { state in
            if var group = state.pinReports[report.id] {
                group.count += 1
                group.lastSeen = max(group.lastSeen, report.lastSeen)
                group.source = report.source
                state.pinReports[report.id] = group
                return 0
            }
            var report = report
            report.count = 1
            state.pinReports[report.id] = report
            let excess = state.pinReports.count - limit
            guard excess > 0 else { return 0 }
            let kept = state.pinReports.values.sorted { a, b in
                let (keepA, keepB) = (a.count > 1 || a.id == report.id, b.count > 1 || b.id == report.id)
                return keepA != keepB ? keepA : (a.lastSeen, a.id) > (b.lastSeen, b.id)
            }
            for group in kept.suffix(excess) { state.pinReports[group.id] = nil }
            return excess
        }
    }

    public func pinReports(limit: Int) async throws -> [PinReportRecord] {
        state.withLock { Array(Self.byRecency($0.pinReports.values).prefix(limit)) }
    }

    /// Most recently seen first, ties by id.
    static func byRecency(_ groups: some Sequence<PinReportRecord>) -> [PinReportRecord] {
        groups.sorted { ($0.lastSeen, $0.id) > ($1.lastSeen, $1.id) }
    }

    public func advanceCounter(deviceID: String, to value: UInt64, window: Int) async throws -> Bool {
        state.withLock { state in
            guard let device = state.devices[deviceID] else { return false }
            var counters = CounterWindow(highest: device.counter, seen: state.counterWindows[deviceID] ?? 0)
            guard counters.accept(value, width: window) else { return false }
            state.devices[deviceID]!.counter = counters.highest
            state.counterWindows[deviceID] = counters.seen
            return true
        }
    }

    nonisolated(nonsending) public func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool {
        try await nonces.claim(keyID: keyID, nonce: nonce, until: expiry, now: now)
    }

    public func recordAttestation(batch: String, deviceID: String, now: Date, window: TimeInterval) async throws -> Int {
        state.withLock { state in
            var devices = state.attestations[batch, default: [:]]
            if devices[deviceID] == nil { devices[deviceID] = now }
            state.attestations[batch] = devices
            let since = now.addingTimeInterval(-window)
            return devices.values.count { $0 > since && $0 <= now }
        }
    }

    public func sweep(now: Date) async throws -> Int {
        let removed = state.withLock { state in
            let oldest = now.addingTimeInterval(-AttestationBatchRetention.seconds)
            var attestations = 0
            for (batch, devices) in state.attestations {
                let kept = devices.filter { $0.value >= oldest }
                attestations += devices.count - kept.count
                state.attestations[batch] = kept.isEmpty ? nil : kept
            }
            let reports = state.pinReports.count
            state.pinReports = state.pinReports.filter { $0.value.lastSeen >= now.addingTimeInterval(-PinReportRecord.retention) }
            let failures = state.loginFailures.count
            state.loginFailures = state.loginFailures.filter { $0.value.windowEnd > now }
            return reports - state.pinReports.count + failures - state.loginFailures.count + attestations
                + state.console.sweep(now: now)
        }
        return removed + nonces.sweep(now: now)
    }

    public func ping() async throws {}

    public var boundsItsOwnWaits: Bool { true }

    public func shutdown() async throws {}
}
