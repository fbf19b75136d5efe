// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import PostgresNIO
import SignetCore
import SignetStore

/// The operator console's reads and the gateway's activity batches. A batch is one statement per
/// table (`UNNEST` of arrays), so instances adding into the same minute never lose a count.
extension PostgresStore {
    public func recordActivity(counts: [ActivityCount], refusals: [RefusalRecord], lastSeen: [String: Date]) async throws {
        if !lastSeen.isEmpty {
            let ids = Array(lastSeen.keys)
            let times = ids.map { Self.millis(lastSeen[$0]!) }
            _ = try await count(
                """
                UPDATE devices SET last_seen_at = GREATEST(COALESCE(devices.last_seen_at, 0), seen.t)
                FROM UNNEST(\(ids)::text[], \(times)::bigint[]) AS seen(id, t)
                WHERE devices.device_id = seen.id RETURNING 1
                """
            )
        }
        if !counts.isEmpty {
            let minutes = counts.map(\.minute)
            let outcomes = counts.map(\.outcome)
            let reasons = counts.map(\.reason)
            let values = counts.map { Int64($0.count) }
            _ = try await count(
                """
                INSERT INTO activity_counts (minute, outcome, reason, count)
                SELECT * FROM UNNEST(\(minutes)::bigint[], \(outcomes)::text[], \(reasons)::text[], \(values)::bigint[])
                ON CONFLICT (minute, outcome, reason) DO UPDATE SET count = activity_counts.count + excluded.count
                RETURNING 1
                """
            )
        }
        if !refusals.isEmpty {
            let at = refusals.map { Self.millis($0.at) }
            let reasons = refusals.map(\.reason)
            let statuses = refusals.map { Int64($0.status) }
            let methods = refusals.map(\.method)
            let paths = refusals.map(\.path)
            // Arrays of optionals do not bind; an empty string stands for none.
            let keyIDs = refusals.map { $0.keyID ?? "" }
            let sources = refusals.map { $0.source ?? "" }
            let instances = refusals.map { $0.instance ?? "" }
            let monitored = refusals.map(\.monitored)
            _ = try await count(
                """
                INSERT INTO refusals (at, reason, status, method, path, key_id, source, instance, monitored)
                SELECT a, r, s::int, m, p, NULLIF(k, ''), NULLIF(src, ''), NULLIF(i, ''), mo
                FROM UNNEST(\(at)::bigint[], \(reasons)::text[], \(statuses)::bigint[], \(methods)::text[],
                    \(paths)::text[], \(keyIDs)::text[], \(sources)::text[], \(instances)::text[], \(monitored)::boolean[])
                    AS t(a, r, s, m, p, k, src, i, mo)
                ORDER BY a RETURNING 1
                """
            )
        }
    }

    public func activityCounts(since minute: Int64) async throws -> [ActivityCount] {
        var result: [ActivityCount] = []
        try await perform { client, logger in
            let rows = try await client.query(
                "SELECT minute, outcome, reason, count FROM activity_counts WHERE minute >= \(minute)",
                logger: logger
            )
            for try await (minute, outcome, reason, count) in rows.decode((Int64, String, String, Int64).self) {
                result.append(ActivityCount(minute: minute, outcome: outcome, reason: reason, count: Int(count)))
            }
        }
        return result
    }

    public func refusals(reason: String?, before: Int64?, limit: Int) async throws -> [RefusalRecord] {
        let before = before ?? Int64.max
        let query: PostgresQuery =
            if let reason {
                """
                SELECT id, at, reason, status, method, path, key_id, source, instance, monitored FROM refusals
                WHERE reason = \(reason) AND id < \(before) ORDER BY id DESC LIMIT \(limit)
                """
            } else {
                """
                SELECT id, at, reason, status, method, path, key_id, source, instance, monitored FROM refusals
                WHERE id < \(before) ORDER BY id DESC LIMIT \(limit)
                """
            }
        var result: [RefusalRecord] = []
        try await perform { client, logger in
            let rows = try await client.query(query, logger: logger)
            for try await (id, at, reason, status, method, path, keyID, source, instance, monitored) in rows.decode(
                (Int64, Int64, String, Int32, String, String, String?, String?, String?, Bool).self
            ) {
                result.append(
                    RefusalRecord(
                        id: id,
                        at: Self.date(millis: at),
                        reason: reason,
                        status: Int(status),
                        method: method,
                        path: path,
                        keyID: keyID,
                        source: source,
                        instance: instance,
                        monitored: monitored
                    )
                )
            }
        }
        return result
    }

    public func appendAudit(_ record: AuditRecord) async throws {
        let at = Self.millis(record.at)
        _ = try await count(
            """
            INSERT INTO audit_log (at, actor, action, target, source)
            VALUES (\(at), \(record.actor), \(record.action), \(record.target), \(record.source)) RETURNING 1
            """
        )
    }

    /// One statement: the entry is inserted from the `UPDATE`'s own result, so both happen or neither.
    public func revokeDevice(id: String, at time: Date, by actor: String, source: String?) async throws -> Bool {
        let millis = Self.millis(time)
        return try await count(
            """
            WITH revoked AS (
                UPDATE devices SET status = 'revoked', revoked_at = COALESCE(revoked_at, \(millis))
                WHERE device_id = \(id) RETURNING device_id
            )
            INSERT INTO audit_log (at, actor, action, target, source)
            SELECT \(millis), \(actor), 'device.revoke', device_id, \(source) FROM revoked RETURNING 1
            """
        ) > 0
    }

    public func auditRecords(before: Int64?, limit: Int) async throws -> [AuditRecord] {
        let before = before ?? Int64.max
        var result: [AuditRecord] = []
        try await perform { client, logger in
            let rows = try await client.query(
                """
                SELECT id, at, actor, action, target, source FROM audit_log WHERE id < \(before)
                ORDER BY id DESC LIMIT \(limit)
                """,
                logger: logger
            )
            for try await (id, at, actor, action, target, source) in rows.decode(
                (Int64, Int64, String, String, String, String?).self
            ) {
                result.append(
                    AuditRecord(id: id, at: Self.date(millis: at), actor: actor, action: action, target: target, source: source)
                )
            }
        }
        return result
    }

    public func createAdminSession(_ session: AdminSessionRecord) async throws {
        let created = Self.millis(session.createdAt)
        let expires = Self.millis(session.expiresAt)
        _ = try await count(
            """
            INSERT INTO admin_sessions (id_hash, csrf, actor, created_at, expires_at)
            VALUES (\(session.idHash), \(session.csrfToken), \(session.actor), \(created), \(expires)) RETURNING 1
            """
        )
    }

    public func adminSession(idHash: String, now: Date) async throws -> AdminSessionRecord? {
        let cutoff = Self.millis(now)
        var result: AdminSessionRecord?
        try await perform { client, logger in
            let rows = try await client.query(
                """
                SELECT id_hash, csrf, actor, created_at, expires_at FROM admin_sessions
                WHERE id_hash = \(idHash) AND expires_at > \(cutoff)
                """,
                logger: logger
            )
            for try await (hash, csrf, actor, created, expires) in rows.decode((String, String, String, Int64, Int64).self) {
                result = AdminSessionRecord(
                    idHash: hash,
                    csrfToken: csrf,
                    actor: actor,
                    createdAt: Self.date(millis: created),
                    expiresAt: Self.date(millis: expires)
                )
            }
        }
        return result
    }

    public func deleteAdminSession(idHash: String) async throws {
        _ = try await count("DELETE FROM admin_sessions WHERE id_hash = \(idHash) RETURNING 1")
    }

    public func listDevices(_ listing: DeviceListing) async throws -> [DeviceRecord] {
        let createdBefore = listing.after.map { Self.millis($0.createdAt) } ?? Int64.max
        let idBefore = listing.after?.deviceID ?? ""
        let limit = listing.limit
        // The row-value comparison matches the index (created_at, device_id); a search is three
        // index lookups (a bitmap OR).
        if let search = listing.search {
            return try await devices(
                """
                SELECT device_id, key_id, algorithm, public_key_jwk, trust_level, counter, status, created_at,
                    revoked_at, attributes, user_name, risk_metric, last_seen_at FROM devices
                WHERE (device_id = \(search) OR key_id = \(search) OR user_name = \(search))
                    AND (created_at, device_id) < (\(createdBefore), \(idBefore))
                ORDER BY created_at DESC, device_id DESC LIMIT \(limit)
                """
            )
        }
        return try await devices(
            """
            SELECT device_id, key_id, algorithm, public_key_jwk, trust_level, counter, status, created_at,
                revoked_at, attributes, user_name, risk_metric, last_seen_at FROM devices
            WHERE (created_at, device_id) < (\(createdBefore), \(idBefore))
            ORDER BY created_at DESC, device_id DESC LIMIT \(limit)
            """
        )
    }

    public func pinReport(id: String) async throws -> PinReportRecord? {
        try await pinReports(
            """
            SELECT id, hostname, reason, served_pins, count, first_seen, last_seen, source, report
            FROM pin_report_groups WHERE id = \(id)
            """
        ).first
    }

    public func pinReportHosts(limit: Int) async throws -> [PinReportHostCount] {
        var result: [PinReportHostCount] = []
        try await perform { client, logger in
            let rows = try await client.query(
                """
                SELECT hostname, SUM(count)::BIGINT AS n FROM pin_report_groups GROUP BY hostname ORDER BY n DESC, hostname
                LIMIT \(limit)
                """,
                logger: logger
            )
            for try await (host, count) in rows.decode((String, Int64).self) {
                result.append(PinReportHostCount(hostname: host, count: Int(count)))
            }
        }
        return result
    }

    public func pinReportGroupCount() async throws -> Int {
        var result: Int64 = 0
        try await perform { client, logger in
            for try await value in try await client.query("SELECT COUNT(*) FROM pin_report_groups", logger: logger)
                .decode(Int64.self)
            {
                result = value
            }
        }
        return Int(result)
    }

    /// Old refusals and counts, refusals beyond the kept maximum, expired sessions.
    func sweepConsole(now: Date) async throws -> Int {
        let oldest = Self.millis(now.addingTimeInterval(-RefusalRecord.retention))
        let kept = RefusalRecord.maximumKept
        let firstMinute = ActivityCount.minute(of: now.addingTimeInterval(-ActivityCount.retention))
        let cutoff = Self.millis(now)
        return try await count("DELETE FROM refusals WHERE at < \(oldest) RETURNING 1")
            + count(
                """
                DELETE FROM refusals WHERE id <= (SELECT id FROM refusals ORDER BY id DESC LIMIT 1 OFFSET \(kept))
                RETURNING 1
                """
            )
            + count("DELETE FROM activity_counts WHERE minute < \(firstMinute) RETURNING 1")
            + count("DELETE FROM admin_sessions WHERE expires_at <= \(cutoff) RETURNING 1")
    }
}
