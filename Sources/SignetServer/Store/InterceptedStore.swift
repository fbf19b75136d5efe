// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore

/// What stands around each store operation: ``StoreGuard`` (deadlines, fail-fast), and in tests a
/// store that stalls on demand.
package protocol StoreInterceptor: Sendable {
    /// Runs `operation`, named `name` (`nonce_claim`, `device_lookup`, …). `probe`: a readiness
    /// check, which asks whether the store answers now.
    nonisolated(nonsending) func run<T: Sendable>(_ name: String, probe: Bool, _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T) async throws -> T
}

extension StoreInterceptor {
    nonisolated(nonsending) func run<T: Sendable>(_ name: String, _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T) async throws -> T {
        try await run(name, probe: false, operation)
    }
}

/// A store whose every operation goes through `interceptor`: written once, for each of
/// ``SignetStorage``'s operations, so that what stands around them is written once too.
///
/// Its operations run where their caller runs (`nonisolated(nonsending)`), with no executor hop
/// on the way in or out. The closures capture `self`, not `[base]`: Swift 6.3 makes a closure with
/// a capture list concurrent (`@concurrent`), which hops at its entry and after it.
package final class InterceptedStore<Interceptor: StoreInterceptor>: SignetStorage {
    package let base: any SignetStorage
    package let interceptor: Interceptor

    package init(_ base: any SignetStorage, interceptor: Interceptor) {
        self.base = base
        self.interceptor = interceptor
    }

    // MARK: SignetStorage

    nonisolated(nonsending) package func sweep(now: Date) async throws -> Int { try await interceptor.run("sweep") { try await self.base.sweep(now: now) } }
    nonisolated(nonsending) package func ping() async throws { try await interceptor.run("ping", probe: true) { try await self.base.ping() } }
    /// Not intercepted: closing waits for what is in flight.
    nonisolated(nonsending) package func shutdown() async throws { try await base.shutdown() }

    // MARK: Devices, nonces, counters

    nonisolated(nonsending) package func registerDevice(_ device: DeviceRecord) async throws {
        try await interceptor.run("register_device") { try await self.base.registerDevice(device) }
    }
    nonisolated(nonsending) package func device(keyID: String) async throws -> DeviceRecord? {
        try await interceptor.run("device_lookup") { try await self.base.device(keyID: keyID) }
    }
    nonisolated(nonsending) package func device(id: String) async throws -> DeviceRecord? {
        try await interceptor.run("device") { try await self.base.device(id: id) }
    }
    nonisolated(nonsending) package func revokeDevice(id: String, at time: Date) async throws -> Bool {
        try await interceptor.run("revoke_device") { try await self.base.revokeDevice(id: id, at: time) }
    }
    nonisolated(nonsending) package func advanceCounter(deviceID: String, to value: UInt64, window: Int) async throws -> Bool {
        try await interceptor.run("advance_counter") { try await self.base.advanceCounter(deviceID: deviceID, to: value, window: window) }
    }
    nonisolated(nonsending) package func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool {
        try await interceptor.run("nonce_claim") { try await self.base.claim(keyID: keyID, nonce: nonce, until: expiry, now: now) }
    }
    nonisolated(nonsending) package func recordAttestation(batch: String, deviceID: String, now: Date, window: TimeInterval) async throws -> Int {
        try await interceptor.run("record_attestation") {
            try await self.base.recordAttestation(batch: batch, deviceID: deviceID, now: now, window: window)
        }
    }

    // MARK: Pin reports

    nonisolated(nonsending) package func recordPinReport(_ report: PinReportRecord, limit: Int) async throws -> Int {
        try await interceptor.run("record_pin_report") { try await self.base.recordPinReport(report, limit: limit) }
    }
    nonisolated(nonsending) package func pinReports(limit: Int) async throws -> [PinReportRecord] {
        try await interceptor.run("pin_reports") { try await self.base.pinReports(limit: limit) }
    }
    nonisolated(nonsending) package func pinReport(id: String) async throws -> PinReportRecord? {
        try await interceptor.run("pin_report") { try await self.base.pinReport(id: id) }
    }
    nonisolated(nonsending) package func pinReportHosts(limit: Int) async throws -> [PinReportHostCount] {
        try await interceptor.run("pin_report_hosts") { try await self.base.pinReportHosts(limit: limit) }
    }
    nonisolated(nonsending) package func pinReportGroupCount() async throws -> Int {
        try await interceptor.run("pin_report_groups") { try await self.base.pinReportGroupCount() }
    }

    // MARK: Accounts and logins

    nonisolated(nonsending) package func putAccount(_ account: AccountRecord) async throws -> Bool {
        try await interceptor.run("put_account") { try await self.base.putAccount(account) }
    }
    nonisolated(nonsending) package func account(name: String) async throws -> AccountRecord? {
        try await interceptor.run("account") { try await self.base.account(name: name) }
    }
    nonisolated(nonsending) package func listAccounts(after name: String?, limit: Int) async throws -> [AccountRecord] {
        try await interceptor.run("list_accounts") { try await self.base.listAccounts(after: name, limit: limit) }
    }
    nonisolated(nonsending) package func account(userhash: String, algorithm: DigestAlgorithm) async throws -> AccountRecord? {
        try await interceptor.run("account_by_userhash") { try await self.base.account(userhash: userhash, algorithm: algorithm) }
    }
    nonisolated(nonsending) package func deleteAccount(name: String, at time: Date) async throws -> Bool {
        try await interceptor.run("delete_account") { try await self.base.deleteAccount(name: name, at: time) }
    }
    nonisolated(nonsending) package func recordLoginFailure(subject: String, window: TimeInterval, now: Date) async throws -> LoginFailures {
        try await interceptor.run("record_login_failure") { try await self.base.recordLoginFailure(subject: subject, window: window, now: now) }
    }
    nonisolated(nonsending) package func loginFailures(subjects: [String], now: Date) async throws -> [String: LoginFailures] {
        try await interceptor.run("login_failures") { try await self.base.loginFailures(subjects: subjects, now: now) }
    }
    nonisolated(nonsending) package func clearLoginFailures(subject: String) async throws {
        try await interceptor.run("clear_login_failures") { try await self.base.clearLoginFailures(subject: subject) }
    }

    // MARK: Secrets and receipts

    nonisolated(nonsending) package func serverSecret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8] {
        try await interceptor.run("server_secret") { try await self.base.serverSecret(named: name, proposing: proposed) }
    }
    nonisolated(nonsending) package func saveReceipt(_ record: ReceiptRecord) async throws {
        try await interceptor.run("save_receipt") { try await self.base.saveReceipt(record) }
    }
    nonisolated(nonsending) package func receipt(deviceID: String) async throws -> ReceiptRecord? {
        try await interceptor.run("receipt") { try await self.base.receipt(deviceID: deviceID) }
    }
    nonisolated(nonsending) package func receiptsDue(at now: Date, limit: Int) async throws -> [ReceiptRecord] {
        try await interceptor.run("receipts_due") { try await self.base.receiptsDue(at: now, limit: limit) }
    }
    nonisolated(nonsending) package func claimReceiptRefresh(deviceID: String, dueAt: Date, leaseUntil: Date) async throws -> Bool {
        try await interceptor.run("claim_receipt_refresh") {
            try await self.base.claimReceiptRefresh(deviceID: deviceID, dueAt: dueAt, leaseUntil: leaseUntil)
        }
    }
    nonisolated(nonsending) package func recordReceiptFailure(deviceID: String, error: String, retryAt: Date, leasedUntil: Date) async throws {
        try await interceptor.run("record_receipt_failure") {
            try await self.base.recordReceiptFailure(deviceID: deviceID, error: error, retryAt: retryAt, leasedUntil: leasedUntil)
        }
    }

    // MARK: The console

    nonisolated(nonsending) package func listDevices(_ listing: DeviceListing) async throws -> [DeviceRecord] {
        try await interceptor.run("list_devices") { try await self.base.listDevices(listing) }
    }
    nonisolated(nonsending) package func recordActivity(counts: [ActivityCount], refusals: [RefusalRecord], lastSeen: [String: Date]) async throws {
        try await interceptor.run("record_activity") { try await self.base.recordActivity(counts: counts, refusals: refusals, lastSeen: lastSeen) }
    }
    nonisolated(nonsending) package func activityCounts(since minute: Int64) async throws -> [ActivityCount] {
        try await interceptor.run("activity_counts") { try await self.base.activityCounts(since: minute) }
    }
    nonisolated(nonsending) package func refusals(reason: String?, before: Int64?, limit: Int) async throws -> [RefusalRecord] {
        try await interceptor.run("refusals") { try await self.base.refusals(reason: reason, before: before, limit: limit) }
    }
    nonisolated(nonsending) package func createAdminSession(_ session: AdminSessionRecord) async throws {
        try await interceptor.run("create_admin_session") { try await self.base.createAdminSession(session) }
    }
    nonisolated(nonsending) package func adminSession(idHash: String, now: Date) async throws -> AdminSessionRecord? {
        try await interceptor.run("admin_session") { try await self.base.adminSession(idHash: idHash, now: now) }
    }
    nonisolated(nonsending) package func deleteAdminSession(idHash: String) async throws {
        try await interceptor.run("delete_admin_session") { try await self.base.deleteAdminSession(idHash: idHash) }
    }
    nonisolated(nonsending) package func appendAudit(_ record: AuditRecord) async throws {
        try await interceptor.run("append_audit") { try await self.base.appendAudit(record) }
    }
    nonisolated(nonsending) package func revokeDevice(id: String, at time: Date, by actor: String, source: String?) async throws -> Bool {
        try await interceptor.run("revoke_device") { try await self.base.revokeDevice(id: id, at: time, by: actor, source: source) }
    }
    nonisolated(nonsending) package func auditRecords(before: Int64?, limit: Int) async throws -> [AuditRecord] {
        try await interceptor.run("audit_records") { try await self.base.auditRecords(before: before, limit: limit) }
    }
}
