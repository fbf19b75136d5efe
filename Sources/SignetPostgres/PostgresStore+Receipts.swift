// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import PostgresNIO
import SignetCore
import SignetStore

/// App Attest receipts; saving one sets the device's risk metric in the same statement.
extension PostgresStore {
    public func saveReceipt(_ record: ReceiptRecord) async throws {
        let receipt = Base64.encode(record.receipt)
        let created = Self.millis(record.createdAt)
        let notBefore = record.notBefore.map(Self.millis)
        let expires = Self.millis(record.expiresAt)
        let risk = record.riskMetric.map(Int32.init(clamping:))
        let refresh = Self.millis(record.refreshAt)
        let failures = Int32(clamping: record.failures)
        _ = try await count(
            """
            WITH saved AS (
                INSERT INTO receipts (device_id, receipt, kind, created_at, not_before, expires_at, risk_metric,
                    refresh_at, failures, last_error)
                VALUES (\(record.deviceID), \(receipt), \(record.kind), \(created), \(notBefore), \(expires),
                    \(risk), \(refresh), \(failures), \(record.lastError))
                ON CONFLICT (device_id) DO UPDATE SET receipt = excluded.receipt, kind = excluded.kind,
                    created_at = excluded.created_at, not_before = excluded.not_before,
                    expires_at = excluded.expires_at, risk_metric = excluded.risk_metric,
                    refresh_at = excluded.refresh_at, failures = excluded.failures,
                    last_error = excluded.last_error
                WHERE excluded.created_at >= receipts.created_at
                RETURNING device_id, risk_metric
            )
            UPDATE devices SET risk_metric = saved.risk_metric FROM saved
            WHERE devices.device_id = saved.device_id RETURNING 1
            """
        )
    }

    public func receipt(deviceID: String) async throws -> ReceiptRecord? {
        try await receipts("\(unescaped: Self.receiptColumns) FROM receipts r WHERE device_id = \(deviceID)").first
    }

    public func receiptsDue(at now: Date, limit: Int) async throws -> [ReceiptRecord] {
        let cutoff = Self.millis(now)
        let limit = Int64(limit)
        return try await receipts(
            """
            \(unescaped: Self.receiptColumns) FROM receipts r JOIN devices d USING (device_id)
            WHERE r.refresh_at <= \(cutoff) AND r.expires_at > \(cutoff) AND d.status = 'active'
            ORDER BY r.failures, r.refresh_at, device_id LIMIT \(limit)
            """
        )
    }

    public func claimReceiptRefresh(deviceID: String, dueAt: Date, leaseUntil: Date) async throws -> Bool {
        let due = Self.millis(dueAt)
        let lease = Self.millis(leaseUntil)
        return try await count(
            """
            UPDATE receipts SET refresh_at = \(lease) WHERE device_id = \(deviceID) AND refresh_at = \(due)
            RETURNING 1
            """
        ) > 0
    }

    public func recordReceiptFailure(deviceID: String, error: String, retryAt: Date, leasedUntil: Date) async throws {
        let retry = Self.millis(retryAt)
        let lease = Self.millis(leasedUntil)
        _ = try await count(
            """
            UPDATE receipts SET failures = failures + 1, last_error = \(error), refresh_at = \(retry)
            WHERE device_id = \(deviceID) AND refresh_at = \(lease) RETURNING 1
            """
        )
    }

    private static let receiptColumns = """
        SELECT r.device_id, r.receipt, r.kind, r.created_at, r.not_before, r.expires_at, r.risk_metric,
            r.refresh_at, r.failures, r.last_error
        """

    private func receipts(_ query: PostgresQuery) async throws -> [ReceiptRecord] {
        var result: [ReceiptRecord] = []
        try await perform { client, logger in
            let rows = try await client.query(query, logger: logger)
            for try await (device, receipt, kind, created, notBefore, expires, risk, refresh, failures, error)
                in rows.decode(
                    (String, String, String, Int64, Int64?, Int64, Int32?, Int64, Int32, String?).self
                )
            {
                guard let bytes = Base64.decode(receipt) else {
                    throw SignetError(.storeUnavailable, "a receipts row is invalid")
                }
                result.append(
                    ReceiptRecord(
                        deviceID: device,
                        receipt: bytes,
                        kind: kind,
                        createdAt: Self.date(millis: created),
                        notBefore: notBefore.map(Self.date(millis:)),
                        expiresAt: Self.date(millis: expires),
                        riskMetric: risk.map(Int.init),
                        refreshAt: Self.date(millis: refresh),
                        failures: Int(failures),
                        lastError: error
                    )
                )
            }
        }
        return result
    }
}
