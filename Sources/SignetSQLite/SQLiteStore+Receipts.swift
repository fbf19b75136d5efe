// SPDX-License-Identifier: Apache-2.0
import Foundation
import SQLiteNIO
import SignetCore
import SignetStore

/// App Attest receipts; the device's risk metric is set by triggers on the same statement.
extension SQLiteStore {
    public func saveReceipt(_ record: ReceiptRecord) async throws {
        try await run(
            """
            INSERT INTO receipts (device_id, receipt, kind, created_at, not_before, expires_at, risk_metric,
                refresh_at, failures, last_error)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (device_id) DO UPDATE SET receipt = excluded.receipt, kind = excluded.kind,
                created_at = excluded.created_at, not_before = excluded.not_before,
                expires_at = excluded.expires_at, risk_metric = excluded.risk_metric,
                refresh_at = excluded.refresh_at, failures = excluded.failures, last_error = excluded.last_error
            WHERE excluded.created_at >= receipts.created_at
            """,
            [
                .text(record.deviceID), .text(Base64.encode(record.receipt)), .text(record.kind), .integer(Self.millis(record.createdAt)),
                record.notBefore.map { .integer(Self.millis($0)) } ?? .null, .integer(Self.millis(record.expiresAt)),
                record.riskMetric.map { .integer($0) } ?? .null, .integer(Self.millis(record.refreshAt)),
                .integer(record.failures), record.lastError.map { .text($0) } ?? .null,
            ]
        )
    }

    public func receipt(deviceID: String) async throws -> ReceiptRecord? {
        try await query("SELECT * FROM receipts WHERE device_id = ?", [.text(deviceID)]).first.map(Self.receipt)
    }

    public func receiptsDue(at now: Date, limit: Int) async throws -> [ReceiptRecord] {
        try await query(
            """
            SELECT r.* FROM receipts r JOIN devices d ON d.device_id = r.device_id
            WHERE r.refresh_at <= ?1 AND r.expires_at > ?1 AND d.status = 'active'
            ORDER BY r.failures, r.refresh_at, r.device_id LIMIT ?2
            """,
            [.integer(Self.millis(now)), .integer(limit)]
        ).map(Self.receipt)
    }

    public func claimReceiptRefresh(deviceID: String, dueAt: Date, leaseUntil: Date) async throws -> Bool {
        try await !query(
            "UPDATE receipts SET refresh_at = ? WHERE device_id = ? AND refresh_at = ? RETURNING device_id",
            [.integer(Self.millis(leaseUntil)), .text(deviceID), .integer(Self.millis(dueAt))]
        ).isEmpty
    }

    public func recordReceiptFailure(deviceID: String, error: String, retryAt: Date, leasedUntil: Date) async throws {
        try await run(
            """
            UPDATE receipts SET failures = failures + 1, last_error = ?, refresh_at = ?
            WHERE device_id = ? AND refresh_at = ?
            """,
            [.text(error), .integer(Self.millis(retryAt)), .text(deviceID), .integer(Self.millis(leasedUntil))]
        )
    }

    private static func receipt(_ row: SQLiteRow) throws -> ReceiptRecord {
        guard let deviceID = row.column("device_id")?.string,
            let receipt = row.column("receipt")?.string.flatMap(Base64.decode),
            let kind = row.column("kind")?.string, let created = row.column("created_at")?.integer,
            let expires = row.column("expires_at")?.integer, let refresh = row.column("refresh_at")?.integer
        else { throw SignetError(.storeUnavailable, "a receipts row is incomplete") }
        return ReceiptRecord(
            deviceID: deviceID,
            receipt: receipt,
            kind: kind,
            createdAt: date(millis: created),
            notBefore: row.column("not_before")?.integer.map(date(millis:)),
            expiresAt: date(millis: expires),
            riskMetric: row.column("risk_metric")?.integer,
            refreshAt: date(millis: refresh),
            failures: row.column("failures")?.integer ?? 0,
            lastError: row.column("last_error")?.string
        )
    }
}
