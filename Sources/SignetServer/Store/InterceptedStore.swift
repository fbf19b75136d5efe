// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore

/// What stands around each store operation: ``StoreGuard`` (deadlines, fail-fast), and in tests a
/// store that stalls on demand.
package protocol StoreInterceptor: Sendable {
    /// Runs `operation`, named `name` (`nonce_claim`, `device_lookup`, …). `probe`: a readiness
    /// check, which asks whether the store answers now.
    func run<T: Sendable>(_ name: String, probe: Bool, _ operation: @escaping @Sendable () async throws -> T) async throws -> T
}

extension StoreInterceptor {
    func run<T: Sendable>(_ name: String, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await run(name, probe: false, operation)
    }
}

/// A store whose every operation goes through `interceptor`: written once, for each of
/// ``SignetStorage``'s operations, so that what stands around them is written once too.
package final class InterceptedStore<Interceptor: StoreInterceptor>: SignetStorage {
    package let base: any SignetStorage
    package let interceptor: Interceptor

    package init(_ base: any SignetStorage, interceptor: Interceptor) {
        self.base = base
        self.interceptor = interceptor
    }

    // MARK: SignetStorage

    package func sweep(now: Date) async throws -> Int { try await interceptor.run("sweep") { [base] in try await base.sweep(now: now) } }
    package func ping() async throws { try await interceptor.run("ping", probe: true) { [base] in try await base.ping() } }
    /// Not intercepted: closing waits for what is in flight.
    package func shutdown() async throws { try await base.shutdown() }

    // MARK: Devices, nonces, counters

    package func registerDevice(_ device: DeviceRecord) async throws {
        try await interceptor.run("register_device") { [base] in try await base.registerDevice(device) }
    }
    package func device(keyID: String) async throws -> DeviceRecord? {
        try await interceptor.run("device_lookup") { [base] in try await base.device(keyID: keyID) }
    }
    package func device(id: String) async throws -> DeviceRecord? {
        try await interceptor.run("device") { [base] in try await base.device(id: id) }
    }
    package func revokeDevice(id: String, at time: Date) async throws -> Bool {
        try await interceptor.run("revoke_device") { [base] in try await base.revokeDevice(id: id, at: time) }
    }
    package func advanceCounter(deviceID: String, to value: UInt64, window: Int) async throws -> Bool {
        try await interceptor.run("advance_counter") { [base] in try await base.advanceCounter(deviceID: deviceID, to: value, window: window) }
    }
    package func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool {
        try await interceptor.run("nonce_claim") { [base] in try await base.claim(keyID: keyID, nonce: nonce, until: expiry, now: now) }
    }
    package func recordAttestation(batch: String, deviceID: String, now: Date, window: TimeInterval) async throws -> Int {
        try await interceptor.run("record_attestation") { [base] in
            try await base.recordAttestation(batch: batch, deviceID: deviceID, now: now, window: window)
        }
    }

    // MARK: Pin reports

    package func recordPinReport(_ report: PinReportRecord, limit: Int) async throws -> Int {
        try await interceptor.run("record_pin_report") { [base] in try await base.recordPinReport(report, limit: limit) }
    }
    package func pinReports(limit: Int) async throws -> [PinReportRecord] {
        try await interceptor.run("pin_reports") { [base] in try await base.pinReports(limit: limit) }
    }
    package func pinReport(id: String) async throws -> PinReportRecord? {
        try await interceptor.run("pin_report") { [base] in try await base.pinReport(id: id) }
    }
    package func pinReportHosts(limit: Int) async throws -> [PinReportHostCount] {
        try await interceptor.run("pin_report_hosts") { [base] in try await base.pinReportHosts(limit: limit) }
    }
    package func pinReportGroupCount() async throws -> Int {
        try await interceptor.run("pin_report_groups") { [base] in try await base.pinReportGroupCount() }
    }

    // MARK: Accounts and logins

    package func putAccount(_ account: AccountRecord) async throws -> Bool {
        try await interceptor.run("put_account") { [base] in try await base.putAccount(account) }
    }
    package func account(name: String) async throws -> AccountRecord? {
        try await interceptor.run("account") { [base] in try await base.account(name: name) }
    }
    package func listAccounts(after name: String?, limit: Int) async throws -> [AccountRecord] {
        try await interceptor.run("list_accounts") { [base] in try await base.listAccounts(after: name, limit: limit) }
    }
    package func account(userhash: String, algorithm: DigestAlgorithm) async throws -> AccountRecord? {
        try await interceptor.run("account_by_userhash") { [base] in try await base.account(userhash: userhash, algorithm: algorithm) }
    }
    package func deleteAccount(name: String, at time: Date) async throws -> Bool {
        try await interceptor.run("delete_account") { [base] in try await base.deleteAccount(name: name, at: time) }
    }
    package func recordLoginFailure(subject: String, window: TimeInterval, now: Date) async throws -> LoginFailures {
        try await interceptor.run("record_login_failure") { [base] in try await base.recordLoginFailure(subject: subject, window: window, now: now) }
    }
    package func loginFailures(subjects: [String], now: Date) async throws -> [String: LoginFailures] {
        try await interceptor.run("login_failures") { [base] in try await base.loginFailures(subjects: subjects, now: now) }
    }
    package func clearLoginFailures(subject: String) async throws {
        try await interceptor.run("clear_login_failures") { [base] in try await base.clearLoginFailures(subject: subject) }
    }

    // MARK: Secrets and receipts

    package func serverSecret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8] {
        try await interceptor.run("server_secret") { [base] in try await base.serverSecret(named: name, proposing: proposed) }
    }
    package func saveReceipt(_ record: ReceiptRecord) async throws {
        try await interceptor.run("save_receipt") { [base] in try await base.saveReceipt(record) }
    }
    package func receipt(deviceID: String) async throws -> ReceiptRecord? {
        try await interceptor.run("receipt") { [base] in try await base.receipt(deviceID: deviceID) }
    }
    package func receiptsDue(at now: Date, limit: Int) async throws -> [ReceiptRecord] {
        try await interceptor.run("receipts_due") { [base] in try await base.receiptsDue(at: now, limit: limit) }
    }
    package func claimReceiptRefresh(deviceID: String, dueAt: Date, leaseUntil: Date) async throws -> Bool {
        try await interceptor.run("claim_receipt_refresh") { [base] in
            try await base.claimReceiptRefresh(deviceID: deviceID, dueAt: dueAt, leaseUntil: leaseUntil)
        }
    }
    package func recordReceiptFailure(deviceID: String, error: String, retryAt: Date, leasedUntil: Date) async throws {
        try await interceptor.run("record_receipt_failure") { [base] in
            try await base.recordReceiptFailure(deviceID: deviceID, error: error, retryAt: retryAt, leasedUntil: leasedUntil)
        }
    }

    // MARK: The console

    package func listDevices(_ listing: DeviceListing) async throws -> [DeviceRecord] {
        try await interceptor.run("list_devices") { [base] in try await base.listDevices(listing) }
    }
    package func recordActivity(counts: [ActivityCount], refusals: [RefusalRecord], lastSeen: [String: Date]) async throws {
        try await interceptor.run("record_activity") { [base] in try await base.recordActivity(counts: counts, refusals: refusals, lastSeen: lastSeen) }
    }
    package func activityCounts(since minute: Int64) async throws -> [ActivityCount] {
        try await interceptor.run("activity_counts") { [base] in try await base.activityCounts(since: minute) }
    }
    package func refusals(reason: String?, before: Int64?, limit: Int) async throws -> [RefusalRecord] {
        try await interceptor.run("refusals") { [base] in try await base.refusals(reason: reason, before: before, limit: limit) }
    }
    package func createAdminSession(_ session: AdminSessionRecord) async throws {
        try await interceptor.run("create_admin_session") { [base] in try await base.createAdminSession(session) }
    }
    package func adminSession(idHash: String, now: Date) async throws -> AdminSessionRecord? {
        try await interceptor.run("admin_session") { [base] in try await base.adminSession(idHash: idHash, now: now) }
    }
    package func deleteAdminSession(idHash: String) async throws {
        try await interceptor.run("delete_admin_session") { [base] in try await base.deleteAdminSession(idHash: idHash) }
    }
    package func appendAudit(_ record: AuditRecord) async throws {
        try await interceptor.run("append_audit") { [base] in try await base.appendAudit(record) }
    }
    package func revokeDevice(id: String, at time: Date, by actor: String, source: String?) async throws -> Bool {
        try await interceptor.run("revoke_device") { [base] in try await base.revokeDevice(id: id, at: time, by: actor, source: source) }
    }
    package func auditRecords(before: Int64?, limit: Int) async throws -> [AuditRecord] {
        try await interceptor.run("audit_records") { [base] in try await base.auditRecords(before: before, limit: limit) }
    }
}
