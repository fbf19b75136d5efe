// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import PostgresNIO
import SignetCore
import SignetStore

/// Accounts, login failure windows and server secrets; row locks make each atomic across instances.
extension PostgresStore {
    public func putAccount(_ account: AccountRecord) async throws -> Bool {
        let sha256 = account.digests[.sha256]
        let sha512 = account.digests[.sha512_256]
        let md5 = account.digests[.md5]
        let created = Self.millis(account.createdAt)
        let updated = Self.millis(account.updatedAt)
        // Insert, else update: an account deleted between the two is created on the next pass.
        while true {
            let inserted = try await count(
                """
                INSERT INTO accounts (name, realm, basic_hash, ha1_sha256, userhash_sha256, ha1_sha512_256,
                    userhash_sha512_256, ha1_md5, userhash_md5, created_at, updated_at)
                VALUES (\(account.name), \(account.realm), \(account.basicHash), \(sha256?.ha1), \(sha256?.userhash),
                    \(sha512?.ha1), \(sha512?.userhash), \(md5?.ha1), \(md5?.userhash), \(created), \(updated))
                ON CONFLICT DO NOTHING RETURNING 1
                """
            )
            if inserted > 0 { return true }
            let changed = try await count(
                """
                UPDATE accounts SET realm = \(account.realm), basic_hash = \(account.basicHash),
                    ha1_sha256 = \(sha256?.ha1), userhash_sha256 = \(sha256?.userhash),
                    ha1_sha512_256 = \(sha512?.ha1), userhash_sha512_256 = \(sha512?.userhash),
                    ha1_md5 = \(md5?.ha1), userhash_md5 = \(md5?.userhash), updated_at = \(updated)
                WHERE name = \(account.name) RETURNING 1
                """
            )
            if changed > 0 { return false }
        }
    }

    public func account(name: String) async throws -> AccountRecord? {
        try await accounts("SELECT \(unescaped: Self.accountColumns) FROM accounts WHERE name = \(name)").first
    }

    public func listAccounts(after name: String?, limit: Int) async throws -> [AccountRecord] {
        // Byte order whatever the database's collation, so that pages agree with the other stores.
        try await accounts(
            """
            SELECT \(unescaped: Self.accountColumns) FROM accounts WHERE name COLLATE "C" > \(name ?? "")
            ORDER BY name COLLATE "C" LIMIT \(max(0, limit))
            """
        )
    }

    public func account(userhash: String, algorithm: DigestAlgorithm) async throws -> AccountRecord? {
        let column = "userhash_" + algorithm.columnSuffix
        return try await accounts(
            "SELECT \(unescaped: Self.accountColumns) FROM accounts WHERE \(unescaped: column) = \(userhash)"
        ).first
    }

    /// One transaction: the delete takes the account row's lock (a registration holding it finishes
    /// first), then the revocation, a statement of its own, sees every device committed by then.
    public func deleteAccount(name: String, at time: Date) async throws -> Bool {
        let revokedAt = Self.millis(time)
        var deleted = false
        try await perform { client, logger in
            deleted = try await client.withTransaction(logger: logger) { connection in
                var found = false
                for try await _ in try await connection.query(
                    "DELETE FROM accounts WHERE name = \(name) RETURNING 1",
                    logger: logger
                ) { found = true }
                guard found else { return false }
                try await connection.query(
                    """
                    UPDATE devices SET status = 'revoked', revoked_at = COALESCE(revoked_at, \(revokedAt))
                    WHERE user_name = \(name)
                    """,
                    logger: logger
                )
                return true
            }
        }
        return deleted
    }

    // MARK: Login failures

    public func recordLoginFailure(subject: String, window: TimeInterval, now: Date) async throws -> LoginFailures {
        let current = Self.millis(now)
        let end = Self.millis(now.addingTimeInterval(window))
        var result: LoginFailures?
        try await perform { client, logger in
            // Every SET expression reads the row as it was: a closed window restarts at one.
            let rows = try await client.query(
                """
                INSERT INTO login_failures (subject, count, window_end) VALUES (\(subject), 1, \(end))
                ON CONFLICT (subject) DO UPDATE SET
                    count = CASE WHEN login_failures.window_end <= \(current) THEN 1 ELSE login_failures.count + 1 END,
                    window_end = CASE WHEN login_failures.window_end <= \(current) THEN \(end)
                        ELSE login_failures.window_end END
                RETURNING count, window_end
                """,
                logger: logger
            )
            for try await (count, windowEnd) in rows.decode((Int, Int64).self) {
                result = LoginFailures(count: count, windowEnd: Self.date(millis: windowEnd))
            }
        }
        guard let result else { throw SignetError(.storeUnavailable, "the login failure count was not returned") }
        return result
    }

    public func loginFailures(subjects: [String], now: Date) async throws -> [String: LoginFailures] {
        guard !subjects.isEmpty else { return [:] }
        let current = Self.millis(now)
        var found: [String: LoginFailures] = [:]
        try await perform { client, logger in
            let rows = try await client.query(
                """
                SELECT subject, count, window_end FROM login_failures
                WHERE window_end > \(current) AND subject = ANY(\(subjects))
                """,
                logger: logger
            )
            for try await (subject, count, windowEnd) in rows.decode((String, Int, Int64).self) {
                found[subject] = LoginFailures(count: count, windowEnd: Self.date(millis: windowEnd))
            }
        }
        return found
    }

    public func clearLoginFailures(subject: String) async throws {
        _ = try await count("DELETE FROM login_failures WHERE subject = \(subject) RETURNING 1")
    }

    // MARK: Server secrets

    public func serverSecret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8] {
        let encoded = Base64.encode(proposed)
        _ = try await count("INSERT INTO server_secrets (name, value) VALUES (\(name), \(encoded)) ON CONFLICT DO NOTHING RETURNING 1")
        var value: [UInt8]?
        try await perform { client, logger in
            for try await text in try await client.query(
                "SELECT value FROM server_secrets WHERE name = \(name)",
                logger: logger
            ).decode(String.self) {
                value = Base64.decode(text)
            }
        }
        guard let value else { throw SignetError(.storeUnavailable, "the server secret \(name) cannot be read") }
        return value
    }

    // MARK: Rows

    static let accountColumns = """
        name, realm, basic_hash, ha1_sha256, userhash_sha256, ha1_sha512_256, userhash_sha512_256, ha1_md5,
        userhash_md5, created_at, updated_at
        """

    private func accounts(_ query: PostgresQuery) async throws -> [AccountRecord] {
        var result: [AccountRecord] = []
        try await perform { client, logger in
            let rows = try await client.query(query, logger: logger)
            for try await row in rows {
                let (name, realm, basic, ha1a, usera, ha1b, userb, ha1c, userc, created, updated) = try row.decode(
                    (String, String, String?, String?, String?, String?, String?, String?, String?, Int64, Int64).self
                )
                var digests: [DigestAlgorithm: AccountRecord.DigestSecret] = [:]
                for (algorithm, ha1, userhash) in [(DigestAlgorithm.sha256, ha1a, usera), (.sha512_256, ha1b, userb), (.md5, ha1c, userc)] {
                    if let ha1, let userhash { digests[algorithm] = .init(ha1: ha1, userhash: userhash) }
                }
                result.append(
                    AccountRecord(
                        name: name,
                        realm: realm,
                        basicHash: basic,
                        digests: digests,
                        createdAt: Self.date(millis: created),
                        updatedAt: Self.date(millis: updated)
                    )
                )
            }
        }
        return result
    }
}
