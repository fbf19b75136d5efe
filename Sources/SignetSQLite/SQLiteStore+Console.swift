// SPDX-License-Identifier: Apache-2.0
import Foundation
import SQLiteNIO
import SignetCore
import SignetStore

/// The operator console's reads and the gateway's activity batches. Every page is an index range
/// (`refusals` by id or `reason, id`, `devices` by `created_at, device_id`), never a scan.
extension SQLiteStore {
    /// Rows per multi-row statement: 9 binds each stays far below SQLite's variable limit.
    private static let batchRows = 500

    public func recordActivity(counts: [ActivityCount], refusals: [RefusalRecord], lastSeen: [String: Date]) async throws {
        for batch in Array(lastSeen).chunked(Self.batchRows) {
            // UPDATE … FROM (VALUES …): one statement for the batch, each row by its primary key.
            try await run(
                """
                UPDATE devices SET last_seen_at = MAX(COALESCE(last_seen_at, 0), seen.column2)
                FROM (VALUES \(Array(repeating: "(?, ?)", count: batch.count).joined(separator: ", "))) AS seen
                WHERE devices.device_id = seen.column1
                """,
                batch.flatMap { [.text($0.key), .integer(Self.millis($0.value))] }
            )
        }
        for batch in counts.chunked(Self.batchRows) {
            try await run(
                """
                INSERT INTO activity_counts (minute, outcome, reason, count)
                VALUES \(Array(repeating: "(?, ?, ?, ?)", count: batch.count).joined(separator: ", "))
                ON CONFLICT (minute, outcome, reason) DO UPDATE SET count = count + excluded.count
                """,
                batch.flatMap { [.integer(Int($0.minute)), .text($0.outcome), .text($0.reason), .integer($0.count)] }
            )
        }
        for batch in refusals.chunked(Self.batchRows) {
            try await run(
                """
                INSERT INTO refusals (at, reason, status, method, path, key_id, source, instance, monitored)
                VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?)", count: batch.count).joined(separator: ", "))
                """,
                batch.flatMap { refusal -> [SQLiteData] in
                    [
                        .integer(Self.millis(refusal.at)), .text(refusal.reason), .integer(refusal.status),
                        .text(refusal.method), .text(refusal.path), refusal.keyID.map { .text($0) } ?? .null,
                        refusal.source.map { .text($0) } ?? .null, refusal.instance.map { .text($0) } ?? .null,
                        .integer(refusal.monitored ? 1 : 0),
                    ]
                }
            )
        }
    }

    public func activityCounts(since minute: Int64) async throws -> [ActivityCount] {
        try await query(
            "SELECT minute, outcome, reason, count FROM activity_counts WHERE minute >= ?",
            [.integer(Int(minute))]
        ).map { row in
            guard let minute = row.column("minute")?.integer, let outcome = row.column("outcome")?.string,
                let reason = row.column("reason")?.string, let count = row.column("count")?.integer
            else { throw SignetError(.storeUnavailable, "an activity_counts row is incomplete") }
            return ActivityCount(minute: Int64(minute), outcome: outcome, reason: reason, count: count)
        }
    }

    public func refusals(reason: String?, before: Int64?, limit: Int) async throws -> [RefusalRecord] {
        let before = SQLiteData.integer(Int(before ?? Int64.max))
        let rows: [SQLiteRow]
        if let reason {
            rows = try await query(
                "SELECT * FROM refusals WHERE reason = ? AND id < ? ORDER BY id DESC LIMIT ?",
                [.text(reason), before, .integer(limit)]
            )
        } else {
            rows = try await query("SELECT * FROM refusals WHERE id < ? ORDER BY id DESC LIMIT ?", [before, .integer(limit)])
        }
        return try rows.map { row in
            guard let id = row.column("id")?.integer, let at = row.column("at")?.integer,
                let reason = row.column("reason")?.string, let status = row.column("status")?.integer,
                let method = row.column("method")?.string, let path = row.column("path")?.string
            else { throw SignetError(.storeUnavailable, "a refusals row is incomplete") }
            return RefusalRecord(
                id: Int64(id),
                at: Self.date(millis: at),
                reason: reason,
                status: status,
                method: method,
                path: path,
                keyID: row.column("key_id")?.string,
                source: row.column("source")?.string,
                instance: row.column("instance")?.string,
                monitored: row.column("monitored")?.integer == 1
            )
        }
    }

    public func appendAudit(_ record: AuditRecord) async throws {
        try await run(
            "INSERT INTO audit_log (at, actor, action, target, source) VALUES (?, ?, ?, ?, ?)",
            [
                .integer(Self.millis(record.at)), .text(record.actor), .text(record.action), .text(record.target),
                record.source.map { .text($0) } ?? .null,
            ]
        )
    }

    /// One statement: the entry is inserted only while the device exists, and the
    /// `audit_log_revokes_device` trigger (migration 7) revokes it inside that statement — SQLite has
    /// no `UPDATE` in a `WITH`, and a `BEGIN` on the store's one shared connection would take in
    /// whatever else runs meanwhile.
    public func revokeDevice(id: String, at time: Date, by actor: String, source: String?) async throws -> Bool {
        let rows = try await query(
            """
            INSERT INTO audit_log (at, actor, action, target, source)
            SELECT ?1, ?2, 'device.revoke', ?3, ?4 WHERE EXISTS (SELECT 1 FROM devices WHERE device_id = ?3)
            RETURNING id
            """,
            [.integer(Self.millis(time)), .text(actor), .text(id), source.map { .text($0) } ?? .null]
        )
        return !rows.isEmpty
    }

    public func auditRecords(before: Int64?, limit: Int) async throws -> [AuditRecord] {
        try await query(
            "SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?",
            [.integer(Int(before ?? Int64.max)), .integer(limit)]
        ).map { row in
            guard let id = row.column("id")?.integer, let at = row.column("at")?.integer,
                let actor = row.column("actor")?.string, let action = row.column("action")?.string,
                let target = row.column("target")?.string
            else { throw SignetError(.storeUnavailable, "an audit_log row is incomplete") }
            return AuditRecord(
                id: Int64(id),
                at: Self.date(millis: at),
                actor: actor,
                action: action,
                target: target,
                source: row.column("source")?.string
            )
        }
    }

    public func createAdminSession(_ session: AdminSessionRecord) async throws {
        try await run(
            "INSERT INTO admin_sessions (id_hash, csrf, actor, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
            [
                .text(session.idHash), .text(session.csrfToken), .text(session.actor),
                .integer(Self.millis(session.createdAt)), .integer(Self.millis(session.expiresAt)),
            ]
        )
    }

    public func adminSession(idHash: String, now: Date) async throws -> AdminSessionRecord? {
        try await query(
            "SELECT * FROM admin_sessions WHERE id_hash = ? AND expires_at > ?",
            [.text(idHash), .integer(Self.millis(now))]
        ).first.map { row in
            guard let hash = row.column("id_hash")?.string, let csrf = row.column("csrf")?.string,
                let actor = row.column("actor")?.string, let created = row.column("created_at")?.integer,
                let expires = row.column("expires_at")?.integer
            else { throw SignetError(.storeUnavailable, "an admin_sessions row is incomplete") }
            return AdminSessionRecord(
                idHash: hash,
                csrfToken: csrf,
                actor: actor,
                createdAt: Self.date(millis: created),
                expiresAt: Self.date(millis: expires)
            )
        }
    }

    public func deleteAdminSession(idHash: String) async throws {
        try await run("DELETE FROM admin_sessions WHERE id_hash = ?", [.text(idHash)])
    }

    public func listDevices(_ listing: DeviceListing) async throws -> [DeviceRecord] {
        // The cursor as a row-value comparison on (created_at, device_id): the index's own order.
        let binds: [SQLiteData] = [
            .integer(listing.after.map { Self.millis($0.createdAt) } ?? Int.max), .text(listing.after?.deviceID ?? ""),
            .integer(listing.limit), .text(listing.search ?? ""),
        ]
        // With a search, each branch of the union is one index lookup.
        let matching =
            listing.search == nil
            ? ""
            : """
            device_id IN (SELECT device_id FROM devices WHERE device_id = ?4
                UNION SELECT device_id FROM devices WHERE key_id = ?4
                UNION SELECT device_id FROM devices WHERE user_name = ?4) AND
            """
        return try await query(
            """
            SELECT * FROM devices WHERE \(matching) (created_at, device_id) < (?1, ?2)
            ORDER BY created_at DESC, device_id DESC LIMIT ?3
            """,
            listing.search == nil ? Array(binds.prefix(3)) : binds
        ).map(Self.device)
    }

    public func pinReport(id: String) async throws -> PinReportRecord? {
        try await query("SELECT * FROM pin_report_groups WHERE id = ?", [.text(id)]).first.map(Self.pinReport)
    }

    public func pinReportHosts(limit: Int) async throws -> [PinReportHostCount] {
        try await query(
            "SELECT hostname, SUM(count) AS n FROM pin_report_groups GROUP BY hostname ORDER BY n DESC, hostname LIMIT ?",
            [.integer(limit)]
        ).map { row in
            guard let host = row.column("hostname")?.string, let count = row.column("n")?.integer else {
                throw SignetError(.storeUnavailable, "a pin report count is incomplete")
            }
            return PinReportHostCount(hostname: host, count: count)
        }
    }

    public func pinReportGroupCount() async throws -> Int {
        try await query("SELECT COUNT(*) AS n FROM pin_report_groups").first?.column("n")?.integer ?? 0
    }

    /// Old refusals and counts, refusals beyond the kept maximum, expired sessions.
    func sweepConsole(now: Date) async throws -> Int {
        let old = try await query(
            "DELETE FROM refusals WHERE at < ? RETURNING 1",
            [.integer(Self.millis(now.addingTimeInterval(-RefusalRecord.retention)))]
        )
        let excess = try await query(
            """
            DELETE FROM refusals WHERE id <= (SELECT id FROM refusals ORDER BY id DESC LIMIT 1 OFFSET ?)
            RETURNING 1
            """,
            [.integer(RefusalRecord.maximumKept)]
        )
        let counts = try await query(
            "DELETE FROM activity_counts WHERE minute < ? RETURNING 1",
            [.integer(Int(ActivityCount.minute(of: now.addingTimeInterval(-ActivityCount.retention))))]
        )
        let sessions = try await query(
            "DELETE FROM admin_sessions WHERE expires_at <= ? RETURNING 1",
            [.integer(Self.millis(now))]
        )
        return old.count + excess.count + counts.count + sessions.count
    }
}

extension Array {
    /// Consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
