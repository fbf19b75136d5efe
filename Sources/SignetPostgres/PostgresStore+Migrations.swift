// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import SignetCore
import SignetStore

/// The schema, as numbered steps, and how it is brought up to date.
extension PostgresStore {
    static let migrations: [[String]] = [
        [
            "CREATE TABLE challenges (value TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
            "CREATE INDEX challenges_expiry ON challenges (expires_at)",
            """
            CREATE TABLE devices (
                device_id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, algorithm TEXT NOT NULL,
                public_key_jwk TEXT NOT NULL, trust_level TEXT NOT NULL, counter BIGINT NOT NULL DEFAULT 0,
                status TEXT NOT NULL, created_at BIGINT NOT NULL, revoked_at BIGINT, attributes TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE nonces (key_id TEXT NOT NULL, nonce TEXT NOT NULL, expires_at BIGINT NOT NULL,
                PRIMARY KEY (key_id, nonce))
            """,
            "CREATE INDEX nonces_expiry ON nonces (expires_at)",
        ],
        [
            """
            CREATE TABLE pin_reports (id TEXT PRIMARY KEY, received_at BIGINT NOT NULL, hostname TEXT NOT NULL,
                source TEXT, report TEXT NOT NULL)
            """,
            "CREATE INDEX pin_reports_received ON pin_reports (received_at)",
        ],
        ["ALTER TABLE devices ADD COLUMN counter_window BIGINT NOT NULL DEFAULT 0"],
        [
            """
            CREATE TABLE accounts (name TEXT PRIMARY KEY, realm TEXT NOT NULL, basic_hash TEXT,
                ha1_sha256 TEXT, userhash_sha256 TEXT, ha1_sha512_256 TEXT, userhash_sha512_256 TEXT,
                ha1_md5 TEXT, userhash_md5 TEXT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX accounts_userhash_sha256 ON accounts (userhash_sha256)",
            "CREATE INDEX accounts_userhash_sha512_256 ON accounts (userhash_sha512_256)",
            "CREATE INDEX accounts_userhash_md5 ON accounts (userhash_md5)",
            "ALTER TABLE devices ADD COLUMN user_name TEXT",
            "CREATE INDEX devices_user ON devices (user_name)",
            """
            CREATE TABLE login_failures (subject TEXT PRIMARY KEY, count INTEGER NOT NULL,
                window_end BIGINT NOT NULL)
            """,
            "CREATE INDEX login_failures_end ON login_failures (window_end)",
            "CREATE TABLE server_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ],
        [
            """
            CREATE TABLE receipts (device_id TEXT PRIMARY KEY, receipt TEXT NOT NULL, kind TEXT NOT NULL,
                created_at BIGINT NOT NULL, not_before BIGINT, expires_at BIGINT NOT NULL, risk_metric INTEGER,
                refresh_at BIGINT NOT NULL, failures INTEGER NOT NULL DEFAULT 0, last_error TEXT)
            """,
            "CREATE INDEX receipts_refresh ON receipts (refresh_at)",
            "ALTER TABLE devices ADD COLUMN risk_metric INTEGER",
            // Devices attested before receipts had a table kept theirs in `attributes`: due at once.
            """
            INSERT INTO receipts (device_id, receipt, kind, created_at, expires_at, refresh_at)
            SELECT device_id, attributes::jsonb->>'receipt', 'ATTEST', created_at, created_at + 7776000000, 0
            FROM devices WHERE algorithm = 'apple-app-attest' AND attributes::jsonb ? 'receipt'
            """,
        ],
        [
            // The operator console: refusals and per-minute counts (written in batches), the audit
            // log, sessions, and the indexes its pages are read on.
            """
            CREATE TABLE refusals (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at BIGINT NOT NULL,
                reason TEXT NOT NULL, status INTEGER NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, key_id TEXT,
                source TEXT)
            """,
            "CREATE INDEX refusals_reason ON refusals (reason, id)",
            "CREATE INDEX refusals_at ON refusals (at)",
            """
            CREATE TABLE activity_counts (minute BIGINT NOT NULL, outcome TEXT NOT NULL, reason TEXT NOT NULL,
                count BIGINT NOT NULL, PRIMARY KEY (minute, outcome, reason))
            """,
            """
            CREATE TABLE audit_log (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at BIGINT NOT NULL,
                actor TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL, source TEXT)
            """,
            """
            CREATE TABLE admin_sessions (id_hash TEXT PRIMARY KEY, csrf TEXT NOT NULL, actor TEXT NOT NULL,
                created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)
            """,
            "CREATE INDEX devices_created ON devices (created_at, device_id)",
            "CREATE INDEX pin_reports_host ON pin_reports (hostname)",
            "ALTER TABLE devices ADD COLUMN last_seen_at BIGINT",
        ],
        // Registration challenges are stateless (`RegistrationChallenge`), claimed as nonces when used;
        // pin reports are grouped (host, reason, served pins) with a count, and bounded.
        [
            "DROP TABLE challenges",
            """
            CREATE TABLE pin_report_groups (id TEXT PRIMARY KEY, hostname TEXT NOT NULL, reason TEXT NOT NULL,
                served_pins TEXT NOT NULL, count BIGINT NOT NULL, first_seen BIGINT NOT NULL,
                last_seen BIGINT NOT NULL, source TEXT, report TEXT NOT NULL)
            """,
            "CREATE INDEX pin_report_groups_seen ON pin_report_groups (last_seen)",
            "CREATE INDEX pin_report_groups_host ON pin_report_groups (hostname)",
            // Reports kept before grouping: a group each, their reason not known then.
            """
            INSERT INTO pin_report_groups (id, hostname, reason, served_pins, count, first_seen, last_seen, source, report)
            SELECT id, hostname, 'unknown', '', 1, received_at, received_at, source, left(report, 8192)
            FROM pin_reports
            """,
            "DROP TABLE pin_reports",
        ],
        [
            // Android attestations per batch certificate (the leaked-keybox count).
            """
            CREATE TABLE attestation_batches (batch TEXT NOT NULL, device_id TEXT NOT NULL,
                attested_at BIGINT NOT NULL, PRIMARY KEY (batch, device_id))
            """,
            "CREATE INDEX attestation_batches_time ON attestation_batches (batch, attested_at)",
            "CREATE INDEX attestation_batches_age ON attestation_batches (attested_at)",
        ],
        // Which gateway instance refused a request (the console's refusals, several instances), and
        // whether a `monitor` route forwarded it (a refusal enforcing would have made).
        [
            "ALTER TABLE refusals ADD COLUMN instance TEXT",
            "ALTER TABLE refusals ADD COLUMN monitored BOOLEAN NOT NULL DEFAULT FALSE",
        ],
    ]

    /// Brings the schema to the latest version, one transaction per step, under an advisory lock so
    /// that instances starting together migrate once.
    func migrate() async throws {
        try await client.withConnection { connection in
            _ = try await connection.query("SELECT pg_advisory_lock(9421)", logger: logger)
            do {
                _ = try await connection.query(
                    "CREATE TABLE IF NOT EXISTS signet_schema (version INTEGER NOT NULL)",
                    logger: logger
                )
                var current = 0
                for try await version in try await connection.query(
                    "SELECT COALESCE(MAX(version), 0) FROM signet_schema",
                    logger: logger
                ).decode(Int.self) {
                    current = version
                }
                try SchemaVersion.check(found: current, known: Self.migrations.count, store: "PostgreSQL")
                for (index, steps) in Self.migrations.enumerated() where index + 1 > current {
                    _ = try await connection.query("BEGIN", logger: logger)
                    do {
                        for step in steps {
                            _ = try await connection.query(PostgresQuery(unsafeSQL: step), logger: logger)
                        }
                        let version = index + 1
                        _ = try await connection.query(
                            "INSERT INTO signet_schema (version) VALUES (\(version))",
                            logger: logger
                        )
                        _ = try await connection.query("COMMIT", logger: logger)
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: logger)
                        throw error
                    }
                }
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(9421)", logger: logger)
                throw error
            }
            _ = try await connection.query("SELECT pg_advisory_unlock(9421)", logger: logger)
        }
    }
}
