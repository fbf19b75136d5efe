// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import SignetCore
import SignetStore

/// `SignetStorage` on PostgreSQL, for several gateway instances sharing one state.
///
/// The same single-statement guards as `SQLiteStore`; PostgreSQL's row locks make each atomic
/// across instances. Migrations run under an advisory lock so instances starting together do not race.
public final class PostgresStore: SignetStorage {
    let client: PostgresClient
    private let runner: Task<Void, Never>
    let logger: Logger

    private init(client: PostgresClient, runner: Task<Void, Never>, logger: Logger) {
        self.client = client
        self.runner = runner
        self.logger = logger
    }

    /// Connects with a URL `postgres://user:password@host:port/database[?sslmode=…]` and applies
    /// migrations; `store_unavailable` when that does not succeed within `timeout`.
    public static func connect(
        url: String,
        logger: Logger = Logger(label: "signet.store.postgres"),
        timeout: Duration = .seconds(15)
    ) async throws -> PostgresStore {
        let client = PostgresClient(configuration: try configuration(url: url), backgroundLogger: logger)
        let runner = Task { await client.run() }
        let store = PostgresStore(client: client, runner: runner, logger: logger)
        do {
            // The pool retries a failing connection (wrong host, refused TLS) with backoff rather
            // than failing the lease: bound the first contact so a bad URL fails the start.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await store.migrate() }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw SignetError(.storeUnavailable, "no PostgreSQL connection within \(timeout)")
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        } catch {
            runner.cancel()
            throw SignetError(.storeUnavailable, "PostgreSQL: \(String(reflecting: error))")
        }
        return store
    }

    // MARK: Devices

    public func registerDevice(_ device: DeviceRecord) async throws {
        let counter = Int64(device.counter)
        let created = Self.millis(device.createdAt)
        let revoked = device.revokedAt.map(Self.millis)
        let attributes = DeviceRecord.encodeAttributes(device.attributes)
        // A device of a user is inserted only while the account exists: `FOR KEY SHARE` holds the
        // account row until the insert commits, so a concurrent delete waits and then revokes it.
        let inserted = try await count(
            """
            INSERT INTO devices (device_id, key_id, algorithm, public_key_jwk, trust_level, counter, status,
                created_at, revoked_at, attributes, user_name)
            SELECT \(device.deviceID), \(device.keyID), \(device.algorithm), \(device.publicKeyJWK),
                \(device.trustLevel.rawValue), \(counter), \(device.status.rawValue), \(created), \(revoked),
                \(attributes), \(device.user)::text
            WHERE \(device.user)::text IS NULL
                OR EXISTS (SELECT 1 FROM accounts WHERE name = \(device.user)::text FOR KEY SHARE)
            ON CONFLICT DO NOTHING RETURNING 1
            """
        )
        guard inserted == 0 else { return }
        if let name = device.user, try await account(name: name) == nil {
            throw SignetError(.credentialsInvalid, "the device's user no longer exists")
        }
        throw SignetError(.deviceExists, "a device with this id or key id exists")
    }

    public func device(keyID: String) async throws -> DeviceRecord? {
        try await devices(
            """
            SELECT device_id, key_id, algorithm, public_key_jwk, trust_level, counter, status, created_at,
                revoked_at, attributes, user_name, risk_metric, last_seen_at FROM devices WHERE key_id = \(keyID)
            """
        ).first
    }

    public func device(id: String) async throws -> DeviceRecord? {
        try await devices(
            """
            SELECT device_id, key_id, algorithm, public_key_jwk, trust_level, counter, status, created_at,
                revoked_at, attributes, user_name, risk_metric, last_seen_at FROM devices WHERE device_id = \(id)
            """
        ).first
    }

    public func revokeDevice(id: String, at time: Date) async throws -> Bool {
        let millis = Self.millis(time)
        return try await count(
            """
            UPDATE devices SET status = 'revoked', revoked_at = COALESCE(revoked_at, \(millis))
            WHERE device_id = \(id) RETURNING 1
            """
        ) > 0
    }

    /// `CounterWindow` as one statement (the row lock makes it atomic across instances). Shift
    /// amounts are clamped to 0...63 wherever PostgreSQL might evaluate them out of range.
    public func advanceCounter(deviceID: String, to value: UInt64, window: Int) async throws -> Bool {
        let counter = Int64(value)
        let width = Int64(max(0, min(window, CounterWindow.maximumWidth)))
        let mask = Int64.max >> (63 - width)
        return try await count(
            """
            UPDATE devices SET
                counter_window = CASE
                    WHEN \(counter) > counter THEN
                        CASE WHEN \(counter) - counter > \(width) THEN 0
                        ELSE ((counter_window << LEAST(GREATEST(\(counter) - counter, 0), 63)::int)
                            | (1::bigint << LEAST(GREATEST(\(counter) - counter - 1, 0), 63)::int)) & \(mask) END
                    ELSE counter_window | (1::bigint << LEAST(GREATEST(counter - \(counter) - 1, 0), 63)::int) END,
                counter = GREATEST(counter, \(counter))
            WHERE device_id = \(deviceID) AND (\(counter) > counter OR (\(counter) < counter
                AND counter - \(counter) - 1 < \(width)
                AND (counter_window & (1::bigint << LEAST(GREATEST(counter - \(counter) - 1, 0), 63)::int)) = 0))
            RETURNING 1
            """
        ) > 0
    }

    func devices(_ query: PostgresQuery) async throws -> [DeviceRecord] {
        var result: [DeviceRecord] = []
        try await perform { client, logger in
            let rows = try await client.query(query, logger: logger)
            for try await (id, keyID, algorithm, jwk, trust, counter, status, created, revoked, attributes, user, risk, seen)
                in rows.decode(
                    (String, String, String, String, String, Int64, String, Int64, Int64?, String, String?, Int32?, Int64?)
                        .self
                )
            {
                guard let trustLevel = TrustLevel(rawValue: trust), let state = DeviceRecord.Status(rawValue: status)
                else { throw SignetError(.storeUnavailable, "a devices row is invalid") }
                result.append(
                    DeviceRecord(
                        deviceID: id,
                        keyID: keyID,
                        algorithm: algorithm,
                        publicKeyJWK: jwk,
                        trustLevel: trustLevel,
                        counter: UInt64(counter),
                        status: state,
                        createdAt: Self.date(millis: created),
                        revokedAt: revoked.map(Self.date(millis:)),
                        attributes: DeviceRecord.decodeAttributes(attributes),
                        user: user,
                        riskMetric: risk.map(Int.init),
                        lastSeenAt: seen.map(Self.date(millis:))
                    )
                )
            }
        }
        return result
    }

    // MARK: Nonces

    nonisolated(nonsending) public func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool {
        let expires = Self.millis(expiry)
        let cutoff = Self.millis(now)
        return try await count(
            """
            INSERT INTO nonces (key_id, nonce, expires_at) VALUES (\(keyID), \(nonce), \(expires))
            ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE nonces.expires_at < \(cutoff)
            RETURNING 1
            """
        ) > 0
    }

    // MARK: Maintenance

    public func sweep(now: Date) async throws -> Int {
        let cutoff = Self.millis(now)
        // A claim is kept past its expiry (NonceRetention): a replay may reach the store with a `now` behind this one.
        let kept = Self.millis(now.addingTimeInterval(-NonceRetention.afterExpiry))
        let nonces = try await count("DELETE FROM nonces WHERE expires_at < \(kept) RETURNING 1")
        let oldest = Self.millis(now.addingTimeInterval(-PinReportRecord.retention))
        let reports = try await count("DELETE FROM pin_report_groups WHERE last_seen < \(oldest) RETURNING 1")
        let failures = try await count("DELETE FROM login_failures WHERE window_end <= \(cutoff) RETURNING 1")
        let retained = Self.millis(now.addingTimeInterval(-AttestationBatchRetention.seconds))
        let attestations = try await count("DELETE FROM attestation_batches WHERE attested_at < \(retained) RETURNING 1")
        return nonces + reports + failures + attestations + (try await sweepConsole(now: now))
    }

    // MARK: Attestation batches

    public func recordAttestation(batch: String, deviceID: String, now: Date, window: TimeInterval) async throws -> Int {
        let at = Self.millis(now)
        let since = Self.millis(now.addingTimeInterval(-window))
        var result: Int?
        try await perform { client, logger in
            _ = try await client.query(
                "INSERT INTO attestation_batches (batch, device_id, attested_at) VALUES (\(batch), \(deviceID), \(at)) ON CONFLICT DO NOTHING",
                logger: logger
            )
            let rows = try await client.query(
                "SELECT COUNT(*)::BIGINT FROM attestation_batches WHERE batch = \(batch) AND attested_at > \(since) AND attested_at <= \(at)",
                logger: logger
            )
            for try await count in rows.decode(Int64.self) { result = Int(count) }
        }
        guard let result else { throw SignetError(.storeUnavailable, "the attestation count was not returned") }
        return result
    }

    // MARK: Pin reports

    public func recordPinReport(_ report: PinReportRecord, limit: Int) async throws -> Int {
        let first = Self.millis(report.firstSeen)
        let last = Self.millis(report.lastSeen)
        var count: Int64 = 0
        try await perform { client, logger in
            let rows = try await client.query(
                """
                INSERT INTO pin_report_groups (id, hostname, reason, served_pins, count, first_seen, last_seen, source, report)
                VALUES (\(report.id), \(report.hostname), \(report.reason), \(report.servedPins), 1, \(first), \(last),
                    \(report.source), \(report.json))
                ON CONFLICT (id) DO UPDATE SET count = pin_report_groups.count + 1,
                    last_seen = GREATEST(pin_report_groups.last_seen, EXCLUDED.last_seen), source = EXCLUDED.source
                RETURNING count
                """,
                logger: logger
            )
            for try await value in rows.decode(Int64.self) { count = value }
        }
        // Only a new group can pass the bound: see `PinReportStore.recordPinReport(_:limit:)` for who goes.
        guard count == 1 else { return 0 }
        return try await self.count(
            """
            DELETE FROM pin_report_groups WHERE id IN
                (SELECT id FROM pin_report_groups
                ORDER BY (count > 1 OR id = \(report.id)) DESC, last_seen DESC, id DESC OFFSET \(limit))
            RETURNING 1
            """
        )
    }

    public func pinReports(limit: Int) async throws -> [PinReportRecord] {
        try await pinReports(
            """
            SELECT id, hostname, reason, served_pins, count, first_seen, last_seen, source, report
            FROM pin_report_groups ORDER BY last_seen DESC, id LIMIT \(limit)
            """
        )
    }

    func pinReports(_ query: PostgresQuery) async throws -> [PinReportRecord] {
        var result: [PinReportRecord] = []
        try await perform { client, logger in
            let rows = try await client.query(query, logger: logger)
            for try await (id, hostname, reason, pins, count, first, last, source, json) in rows.decode(
                (String, String, String, String, Int64, Int64, Int64, String?, String).self
            ) {
                result.append(
                    PinReportRecord(
                        id: id,
                        hostname: hostname,
                        reason: reason,
                        servedPins: pins,
                        count: Int(count),
                        firstSeen: Self.date(millis: first),
                        lastSeen: Self.date(millis: last),
                        source: source,
                        json: json
                    )
                )
            }
        }
        return result
    }

    public func ping() async throws {
        _ = try await count("SELECT 1")
    }

    public func shutdown() async throws {
        runner.cancel()
        await runner.value
    }

    /// Creates database `name` on the server `url` points at (its own database is used to connect)
    /// and returns the URL of the new one. For provisioning and for tests that need isolation.
    public static func createDatabase(
        url: String,
        named name: String,
        logger: Logger = Logger(label: "signet.store.postgres")
    )
        async throws -> String
    {
        let isSafeName = name.utf8.allSatisfy {
            $0 == UInt8(ascii: "_") || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39)
        }
        guard isSafeName, var components = URLComponents(string: url) else {
            throw SignetError(.storeUnavailable, "invalid database name or URL")
        }
        let client = PostgresClient(configuration: try configuration(url: url), backgroundLogger: logger)
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        do {
            _ = try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        } catch {
            throw SignetError(.storeUnavailable, "cannot create database \(name): \(String(reflecting: error))")
        }
        components.path = "/" + name
        return components.string ?? url
    }

    // MARK: Helpers

    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
    static func date(millis: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(millis) / 1000) }

    /// Runs a statement and counts the rows it returned.
    func count(_ query: PostgresQuery) async throws -> Int {
        var rows = 0
        try await perform { client, logger in
            for try await _ in try await client.query(query, logger: logger) { rows += 1 }
        }
        return rows
    }

    /// Runs `body`; a failure is `store_unavailable`, except a value the server refused (SQLSTATE
    /// class 22, a data exception such as a NUL in text; 23, a constraint; 54, a limit such as an
    /// index row too large for a 3 KB nonce), which is the request's `malformed_message`: the store
    /// answered, and a client that sends such values must not make the gateway take the store for
    /// down (`StoreHealth`).
    func perform(_ body: (PostgresClient, Logger) async throws -> Void) async throws {
        do {
            try await body(client, logger)
        } catch let error as SignetError {
            throw error
        } catch let error as PSQLError where error.code == .server {
            let state = error.serverInfo?[.sqlState] ?? ""
            if ["22", "23", "54"].contains(String(state.prefix(2))) {
                throw SignetError(.malformedMessage, "the store refused a value of the request (SQLSTATE \(state))")
            }
            throw SignetError(.storeUnavailable, "PostgreSQL: \(String(reflecting: error))")
        } catch {
            throw SignetError(.storeUnavailable, "PostgreSQL: \(String(reflecting: error))")
        }
    }
}
