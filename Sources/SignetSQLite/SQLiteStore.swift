// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import SQLiteNIO
import SignetCore
import SignetStore

/// The embedded default `SignetStorage`: one SQLite file, created on first start, WAL journal.
///
/// Every replay guard is atomic under SQLite's write lock: a counter is an `UPDATE … WHERE counter <
/// new`; a nonce (and a used registration challenge) is decided, in a batch that holds the lock, by
/// the claims of `nonce_log` read into memory and appended to it when won (`SQLiteClaimConnection`).
public final class SQLiteStore: SignetStorage {
    private let connection: SQLiteConnection
    let nonces: SQLiteNonceBatcher

    private init(connection: SQLiteConnection, claims: SQLiteClaimConnection) {
        self.connection = connection
        self.nonces = SQLiteNonceBatcher(connection: claims)
    }

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    public static func open(path: String, logger: Logger = Logger(label: "signet.store.sqlite")) async throws
        -> SQLiteStore
    {
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        } catch {
            throw SignetError(.storeUnavailable, "cannot open SQLite database at \(path): \(error)")
        }
        let claims: SQLiteClaimConnection
        do {
            claims = try await SQLiteClaimConnection.open(path: path)
        } catch {
            try? await connection.close()
            throw error
        }
        let store = SQLiteStore(connection: connection, claims: claims)
        do {
            try await store.run("PRAGMA journal_mode=WAL")
            // NORMAL in WAL mode survives a process crash (the kill -9 case); FULL would add an fsync per
            // commit to also survive power loss.
            try await store.run("PRAGMA synchronous=NORMAL")
            try await store.run("PRAGMA busy_timeout=5000")
            try await store.migrate()
            // Every live claim of the file goes into memory before the first is decided: a start
            // with millions takes seconds, which an operator should see in the log.
            let started = ContinuousClock.now
            let claims = try await store.nonces.prepare()
            if claims >= 100_000 {
                logger.info(
                    "nonce claims read into memory",
                    metadata: ["claims": "\(claims)", "duration": "\(ContinuousClock.now - started)"]
                )
            }
        } catch {
            try? await store.shutdown()
            throw error
        }
        return store
    }

    // MARK: Migrations

    /// Versioned schema steps; each runs once, in order, recorded in `signet_schema`.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE challenges (value TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)
            """,
            "CREATE INDEX challenges_expiry ON challenges (expires_at)",
            """
            CREATE TABLE devices (
                device_id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, algorithm TEXT NOT NULL,
                public_key_jwk TEXT NOT NULL, trust_level TEXT NOT NULL, counter INTEGER NOT NULL DEFAULT 0,
                status TEXT NOT NULL, created_at INTEGER NOT NULL, revoked_at INTEGER, attributes TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE nonces (key_id TEXT NOT NULL, nonce TEXT NOT NULL, expires_at INTEGER NOT NULL,
                PRIMARY KEY (key_id, nonce)) WITHOUT ROWID
            """,
            "CREATE INDEX nonces_expiry ON nonces (expires_at)",
        ],
        [
            """
            CREATE TABLE pin_reports (id TEXT PRIMARY KEY, received_at INTEGER NOT NULL, hostname TEXT NOT NULL,
                source TEXT, report TEXT NOT NULL)
            """,
            "CREATE INDEX pin_reports_received ON pin_reports (received_at)",
        ],
        ["ALTER TABLE devices ADD COLUMN counter_window INTEGER NOT NULL DEFAULT 0"],
        [
            """
            CREATE TABLE accounts (name TEXT PRIMARY KEY, realm TEXT NOT NULL, basic_hash TEXT,
                ha1_sha256 TEXT, userhash_sha256 TEXT, ha1_sha512_256 TEXT, userhash_sha512_256 TEXT,
                ha1_md5 TEXT, userhash_md5 TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                deleted_at INTEGER)
            """,
            "CREATE INDEX accounts_userhash_sha256 ON accounts (userhash_sha256)",
            "CREATE INDEX accounts_userhash_sha512_256 ON accounts (userhash_sha512_256)",
            "CREATE INDEX accounts_userhash_md5 ON accounts (userhash_md5)",
            "ALTER TABLE devices ADD COLUMN user_name TEXT",
            "CREATE INDEX devices_user ON devices (user_name)",
            // Deleting a user is `UPDATE … SET deleted_at`: this trigger revokes the user's devices
            // and deletes the row in the same statement, so the two cannot come apart.
            """
            CREATE TRIGGER accounts_delete AFTER UPDATE OF deleted_at ON accounts
            WHEN NEW.deleted_at IS NOT NULL BEGIN
                UPDATE devices SET status = 'revoked', revoked_at = COALESCE(revoked_at, NEW.deleted_at)
                    WHERE user_name = NEW.name;
                DELETE FROM accounts WHERE name = NEW.name;
            END
            """,
            """
            CREATE TABLE login_failures (subject TEXT PRIMARY KEY, count INTEGER NOT NULL,
                window_end INTEGER NOT NULL)
            """,
            "CREATE INDEX login_failures_end ON login_failures (window_end)",
            "CREATE TABLE server_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ],
        [
            """
            CREATE TABLE receipts (device_id TEXT PRIMARY KEY, receipt TEXT NOT NULL, kind TEXT NOT NULL,
                created_at INTEGER NOT NULL, not_before INTEGER, expires_at INTEGER NOT NULL, risk_metric INTEGER,
                refresh_at INTEGER NOT NULL, failures INTEGER NOT NULL DEFAULT 0, last_error TEXT)
            """,
            "CREATE INDEX receipts_refresh ON receipts (refresh_at)",
            "ALTER TABLE devices ADD COLUMN risk_metric INTEGER",
            // Devices attested before receipts had a table kept theirs in `attributes`: due at once
            // (the exchange verifies what comes back); 90 days is Apple's ATTEST receipt lifetime.
            """
            INSERT INTO receipts (device_id, receipt, kind, created_at, expires_at, refresh_at)
            SELECT device_id, json_extract(attributes, '$.receipt'), 'ATTEST', created_at,
                created_at + 7776000000, 0
            FROM devices WHERE algorithm = 'apple-app-attest' AND json_extract(attributes, '$.receipt') IS NOT NULL
            """,
            // The device's risk metric follows its receipt in the same statement.
            """
            CREATE TRIGGER receipts_risk_insert AFTER INSERT ON receipts BEGIN
                UPDATE devices SET risk_metric = NEW.risk_metric WHERE device_id = NEW.device_id;
            END
            """,
            """
            CREATE TRIGGER receipts_risk_update AFTER UPDATE OF created_at ON receipts BEGIN
                UPDATE devices SET risk_metric = NEW.risk_metric WHERE device_id = NEW.device_id;
            END
            """,
        ],
        [
            // The operator console: refusals and per-minute counts (written in batches), the audit
            // log, sessions, and the indexes its pages are read on.
            """
            CREATE TABLE refusals (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, reason TEXT NOT NULL,
                status INTEGER NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, key_id TEXT, source TEXT)
            """,
            "CREATE INDEX refusals_reason ON refusals (reason, id)",
            "CREATE INDEX refusals_at ON refusals (at)",
            """
            CREATE TABLE activity_counts (minute INTEGER NOT NULL, outcome TEXT NOT NULL, reason TEXT NOT NULL,
                count INTEGER NOT NULL, PRIMARY KEY (minute, outcome, reason)) WITHOUT ROWID
            """,
            """
            CREATE TABLE audit_log (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, actor TEXT NOT NULL,
                action TEXT NOT NULL, target TEXT NOT NULL, source TEXT)
            """,
            """
            CREATE TABLE admin_sessions (id_hash TEXT PRIMARY KEY, csrf TEXT NOT NULL, actor TEXT NOT NULL,
                created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)
            """,
            "CREATE INDEX devices_created ON devices (created_at, device_id)",
            "CREATE INDEX pin_reports_host ON pin_reports (hostname)",
            "ALTER TABLE devices ADD COLUMN last_seen_at INTEGER",
        ],
        // 7: a `device.revoke` audit entry and the revocation are one statement (`revokeDevice(id:at:by:source:)`).
        [
            """
            CREATE TRIGGER audit_log_revokes_device AFTER INSERT ON audit_log WHEN NEW.action = 'device.revoke'
            BEGIN
                UPDATE devices SET status = 'revoked', revoked_at = COALESCE(revoked_at, NEW.at)
                WHERE device_id = NEW.target;
            END
            """
        ],
        // 8: registration challenges are stateless (`RegistrationChallenge`), claimed as nonces when
        // used; pin reports are grouped (host, reason, served pins) with a count, and bounded.
        [
            "DROP TABLE challenges",
            """
            CREATE TABLE pin_report_groups (id TEXT PRIMARY KEY, hostname TEXT NOT NULL, reason TEXT NOT NULL,
                served_pins TEXT NOT NULL, count INTEGER NOT NULL, first_seen INTEGER NOT NULL,
                last_seen INTEGER NOT NULL, source TEXT, report TEXT NOT NULL)
            """,
            "CREATE INDEX pin_report_groups_seen ON pin_report_groups (last_seen)",
            "CREATE INDEX pin_report_groups_host ON pin_report_groups (hostname)",
            // Reports kept before grouping: a group each, their reason not known then.
            """
            INSERT INTO pin_report_groups (id, hostname, reason, served_pins, count, first_seen, last_seen, source, report)
            SELECT id, hostname, 'unknown', '', 1, received_at, received_at, source, substr(report, 1, 8192)
            FROM pin_reports
            """,
            "DROP TABLE pin_reports",
        ],
        [
            // Android attestations per batch certificate (the leaked-keybox count).
            """
            CREATE TABLE attestation_batches (batch TEXT NOT NULL, device_id TEXT NOT NULL,
                attested_at INTEGER NOT NULL, PRIMARY KEY (batch, device_id))
            """,
            "CREATE INDEX attestation_batches_time ON attestation_batches (batch, attested_at)",
            "CREATE INDEX attestation_batches_age ON attestation_batches (attested_at)",
        ],
        // 10: which gateway instance refused a request (the console's refusals, several instances),
        // and whether a `monitor` route forwarded it (a refusal enforcing would have made).
        [
            "ALTER TABLE refusals ADD COLUMN instance TEXT",
            "ALTER TABLE refusals ADD COLUMN monitored INTEGER NOT NULL DEFAULT 0",
        ],
        // 11: nonce claims are appended in arrival order (a random nonce as the key dirtied a random
        // page per claim) and decided in memory (NonceLogIndex); AUTOINCREMENT, so a `seq` is never
        // reused after a sweep and every process reads each row once. The live claims move over; a
        // process of an earlier version on the file fails its claims (no `nonces`) rather than
        // deciding apart from this one.
        [
            """
            CREATE TABLE nonce_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, key_id TEXT NOT NULL, nonce TEXT NOT NULL,
                expires_at INTEGER NOT NULL)
            """,
            "CREATE INDEX nonce_log_expiry ON nonce_log (expires_at)",
            "INSERT INTO nonce_log (key_id, nonce, expires_at) SELECT key_id, nonce, expires_at FROM nonces ORDER BY expires_at",
            "DROP TABLE nonces",
        ],
    ]

    private func migrate() async throws {
        try await run("CREATE TABLE IF NOT EXISTS signet_schema (version INTEGER NOT NULL)")
        let rows = try await query("SELECT MAX(version) AS version FROM signet_schema")
        let current = rows.first?.column("version")?.integer ?? 0
        try SchemaVersion.check(found: current, known: Self.migrations.count, store: "SQLite")
        for (index, steps) in Self.migrations.enumerated() where index + 1 > current {
            try await run("BEGIN IMMEDIATE")
            do {
                for step in steps { try await run(step) }
                try await run("INSERT INTO signet_schema (version) VALUES (?)", [.integer(index + 1)])
                try await run("COMMIT")
            } catch {
                try? await run("ROLLBACK")
                throw error
            }
        }
    }

    // MARK: Devices

    public func registerDevice(_ device: DeviceRecord) async throws {
        // A device of a user is inserted only while the account exists, in the same statement.
        let user: SQLiteData = device.user.map { .text($0) } ?? .null
        let rows = try await query(
            """
            INSERT INTO devices (device_id, key_id, algorithm, public_key_jwk, trust_level, counter, status,
                created_at, revoked_at, attributes, user_name)
            SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?11
            WHERE ?11 IS NULL OR EXISTS (SELECT 1 FROM accounts WHERE name = ?11)
            ON CONFLICT DO NOTHING RETURNING device_id
            """,
            [
                .text(device.deviceID), .text(device.keyID), .text(device.algorithm), .text(device.publicKeyJWK),
                .text(device.trustLevel.rawValue), .integer(Int(device.counter)), .text(device.status.rawValue),
                .integer(Self.millis(device.createdAt)), device.revokedAt.map { .integer(Self.millis($0)) } ?? .null,
                .text(DeviceRecord.encodeAttributes(device.attributes)), user,
            ]
        )
        guard rows.isEmpty else { return }
        if let name = device.user, try await account(name: name) == nil {
            throw SignetError(.credentialsInvalid, "the device's user no longer exists")
        }
        throw SignetError(.deviceExists, "a device with this id or key id exists")
    }

    public func device(keyID: String) async throws -> DeviceRecord? {
        try await query("SELECT * FROM devices WHERE key_id = ?", [.text(keyID)]).first.map(Self.device)
    }

    public func device(id: String) async throws -> DeviceRecord? {
        try await query("SELECT * FROM devices WHERE device_id = ?", [.text(id)]).first.map(Self.device)
    }

    public func revokeDevice(id: String, at time: Date) async throws -> Bool {
        let rows = try await query(
            "UPDATE devices SET status = 'revoked', revoked_at = COALESCE(revoked_at, ?) WHERE device_id = ? RETURNING device_id",
            [.integer(Self.millis(time)), .text(id)]
        )
        return !rows.isEmpty
    }

    /// `CounterWindow` as one statement: the row's old `counter` and `counter_window` feed every
    /// expression, so concurrent callers with one value cannot both succeed.
    public func advanceCounter(deviceID: String, to value: UInt64, window: Int) async throws -> Bool {
        let width = max(0, min(window, CounterWindow.maximumWidth))
        let rows = try await query(
            """
            UPDATE devices SET
                counter_window = CASE
                    WHEN ?1 > counter THEN
                        CASE WHEN ?1 - counter > ?2 THEN 0
                        ELSE ((counter_window << (?1 - counter)) | (1 << (?1 - counter - 1))) & ?3 END
                    ELSE counter_window | (1 << (counter - ?1 - 1)) END,
                counter = MAX(counter, ?1)
            WHERE device_id = ?4 AND (?1 > counter OR (?1 < counter AND counter - ?1 - 1 < ?2
                AND (counter_window & (1 << MIN(MAX(counter - ?1 - 1, 0), 63))) = 0))
            RETURNING device_id
            """,
            [.integer(Int(value)), .integer(width), .integer(Int.max >> (63 - width)), .text(deviceID)]
        )
        return !rows.isEmpty
    }

    static func device(_ row: SQLiteRow) throws -> DeviceRecord {
        guard let id = row.column("device_id")?.string, let keyID = row.column("key_id")?.string,
            let algorithm = row.column("algorithm")?.string, let jwk = row.column("public_key_jwk")?.string,
            let trust = row.column("trust_level")?.string.flatMap(TrustLevel.init(rawValue:)),
            let counter = row.column("counter")?.integer,
            let status = row.column("status")?.string.flatMap(DeviceRecord.Status.init(rawValue:)),
            let created = row.column("created_at")?.integer
        else { throw SignetError(.storeUnavailable, "a devices row is incomplete") }
        return DeviceRecord(
            deviceID: id,
            keyID: keyID,
            algorithm: algorithm,
            publicKeyJWK: jwk,
            trustLevel: trust,
            counter: UInt64(counter),
            status: status,
            createdAt: date(millis: created),
            revokedAt: row.column("revoked_at")?.integer.map(date(millis:)),
            attributes: DeviceRecord.decodeAttributes(row.column("attributes")?.string ?? "{}"),
            user: row.column("user_name")?.string,
            riskMetric: row.column("risk_metric")?.integer,
            lastSeenAt: row.column("last_seen_at")?.integer.map(date(millis:))
        )
    }

    // MARK: Nonces

    nonisolated(nonsending) public func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool {
        // A new pair is appended; a pair already claimed is won again only once its claim lapsed.
        // Concurrent claims are written together (group commit), see SQLiteNonceBatcher.
        try await nonces.claim(keyID: keyID, nonce: nonce, expiry: Self.millis(expiry), now: Self.millis(now))
    }

    // MARK: Maintenance

    public func sweep(now: Date) async throws -> Int {
        let cutoff = SQLiteData.integer(Self.millis(now))
        // A claim is kept past its expiry (NonceRetention): a process that has not read a row in yet
        // may be asked with a `now` behind this one.
        let nonces = try await query(
            "DELETE FROM nonce_log WHERE expires_at < ? RETURNING 1",
            [.integer(Self.millis(now.addingTimeInterval(-NonceRetention.afterExpiry)))]
        )
        let reports = try await query(
            "DELETE FROM pin_report_groups WHERE last_seen < ? RETURNING 1",
            [.integer(Self.millis(now.addingTimeInterval(-PinReportRecord.retention)))]
        )
        let failures = try await query("DELETE FROM login_failures WHERE window_end <= ? RETURNING 1", [cutoff])
        let attestations = try await query(
            "DELETE FROM attestation_batches WHERE attested_at < ? RETURNING 1",
            [.integer(Self.millis(now.addingTimeInterval(-AttestationBatchRetention.seconds)))]
        )
        return nonces.count + reports.count + failures.count + attestations.count + (try await sweepConsole(now: now))
    }

    // MARK: Attestation batches

    public func recordAttestation(batch: String, deviceID: String, now: Date, window: TimeInterval) async throws -> Int {
        _ = try await query(
            "INSERT INTO attestation_batches (batch, device_id, attested_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [.text(batch), .text(deviceID), .integer(Self.millis(now))]
        )
        let rows = try await query(
            "SELECT COUNT(*) AS count FROM attestation_batches WHERE batch = ? AND attested_at > ? AND attested_at <= ?",
            [.text(batch), .integer(Self.millis(now.addingTimeInterval(-window))), .integer(Self.millis(now))]
        )
        guard let count = rows.first?.column("count")?.integer else {
            throw SignetError(.storeUnavailable, "the attestation count was not returned")
        }
        return count
    }

    // MARK: Pin reports

    public func recordPinReport(_ report: PinReportRecord, limit: Int) async throws -> Int {
        let rows = try await query(
            """
            INSERT INTO pin_report_groups (id, hostname, reason, served_pins, count, first_seen, last_seen, source, report)
            VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET count = count + 1, last_seen = max(last_seen, excluded.last_seen),
                source = excluded.source
            RETURNING count
            """,
            [
                .text(report.id), .text(report.hostname), .text(report.reason), .text(report.servedPins),
                .integer(Self.millis(report.firstSeen)), .integer(Self.millis(report.lastSeen)),
                report.source.map { .text($0) } ?? .null, .text(report.json),
            ]
        )
        // Only a new group can pass the bound: see `PinReportStore.recordPinReport(_:limit:)` for who goes.
        guard rows.first?.column("count")?.integer == 1 else { return 0 }
        return try await query(
            """
            DELETE FROM pin_report_groups WHERE id IN
                (SELECT id FROM pin_report_groups ORDER BY (count > 1 OR id = ?) DESC, last_seen DESC, id DESC
                LIMIT -1 OFFSET ?)
            RETURNING 1
            """,
            [.text(report.id), .integer(limit)]
        ).count
    }

    public func pinReports(limit: Int) async throws -> [PinReportRecord] {
        try await query("SELECT * FROM pin_report_groups ORDER BY last_seen DESC, id LIMIT ?", [.integer(limit)])
            .map(Self.pinReport)
    }

    static func pinReport(_ row: SQLiteRow) throws -> PinReportRecord {
        guard let id = row.column("id")?.string, let hostname = row.column("hostname")?.string,
            let reason = row.column("reason")?.string, let pins = row.column("served_pins")?.string,
            let count = row.column("count")?.integer, let first = row.column("first_seen")?.integer,
            let last = row.column("last_seen")?.integer, let json = row.column("report")?.string
        else { throw SignetError(.storeUnavailable, "a pin_report_groups row is incomplete") }
        return PinReportRecord(
            id: id,
            hostname: hostname,
            reason: reason,
            servedPins: pins,
            count: count,
            firstSeen: date(millis: first),
            lastSeen: date(millis: last),
            source: row.column("source")?.string,
            json: json
        )
    }

    /// A local file: a wait for its write lock ends after `busy_timeout` (5 s), on both connections.
    public var boundsItsOwnWaits: Bool { true }

    public func ping() async throws {
        _ = try await query("SELECT 1")
    }

    public func shutdown() async throws {
        // Both, even when the first fails; the first failure is the one reported.
        var failure: (any Error)?
        do { try await nonces.close() } catch { failure = error }
        try await connection.close()
        if let failure { throw failure }
    }

    // MARK: Helpers

    static func millis(_ date: Date) -> Int { Int((date.timeIntervalSince1970 * 1000).rounded(.down)) }
    static func date(millis: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(millis) / 1000) }

    func run(_ sql: String, _ binds: [SQLiteData] = []) async throws {
        _ = try await query(sql, binds)
    }

    func query(_ sql: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        do {
            return try await connection.query(sql, binds)
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.storeUnavailable, "SQLite: \(error)")
        }
    }
}
