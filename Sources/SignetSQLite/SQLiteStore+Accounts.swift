// SPDX-License-Identifier: Apache-2.0
import Foundation
import SQLiteNIO
import SignetCore
import SignetStore

/// Accounts, login failure windows and server secrets, each guard one statement.
extension SQLiteStore {
    public func putAccount(_ account: AccountRecord) async throws -> Bool {
        // Insert, else update: two statements, each atomic; an account deleted between them is
        // created again on the next pass.
        while true {
            var binds: [SQLiteData] = [
                .text(account.name), .text(account.realm), account.basicHash.map { .text($0) } ?? .null,
            ]
            for algorithm in DigestAlgorithm.allCases {
                let secret = account.digests[algorithm]
                binds += [secret.map { .text($0.ha1) } ?? .null, secret.map { .text($0.userhash) } ?? .null]
            }
            let created = try await query(
                """
                INSERT INTO accounts (name, realm, basic_hash, \(Self.digestColumns), created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING name
                """,
                binds + [.integer(Self.millis(account.createdAt)), .integer(Self.millis(account.updatedAt))]
            )
            if !created.isEmpty { return true }
            let updated = try await query(
                """
                UPDATE accounts SET realm = ?2, basic_hash = ?3, ha1_sha256 = ?4, userhash_sha256 = ?5,
                    ha1_sha512_256 = ?6, userhash_sha512_256 = ?7, ha1_md5 = ?8, userhash_md5 = ?9, updated_at = ?10
                WHERE name = ?1 RETURNING name
                """,
                binds + [.integer(Self.millis(account.updatedAt))]
            )
            if !updated.isEmpty { return false }
        }
    }

    public func account(name: String) async throws -> AccountRecord? {
        try await query("SELECT * FROM accounts WHERE name = ?", [.text(name)]).first.map(Self.account)
    }

    public func listAccounts(after name: String?, limit: Int) async throws -> [AccountRecord] {
        // TEXT compares bytewise (BINARY) in SQLite: the primary key's order.
        try await query(
            "SELECT * FROM accounts WHERE name > ? ORDER BY name LIMIT ?",
            [.text(name ?? ""), .integer(max(0, limit))]
        ).map(Self.account)
    }

    public func account(userhash: String, algorithm: DigestAlgorithm) async throws -> AccountRecord? {
        try await query(
            "SELECT * FROM accounts WHERE userhash_\(algorithm.columnSuffix) = ?",
            [.text(userhash)]
        ).first.map(Self.account)
    }

    public func deleteAccount(name: String, at time: Date) async throws -> Bool {
        // The `accounts_delete` trigger revokes the devices and deletes the row in this statement.
        let rows = try await query(
            "UPDATE accounts SET deleted_at = ? WHERE name = ? RETURNING name",
            [.integer(Self.millis(time)), .text(name)]
        )
        return !rows.isEmpty
    }

    // MARK: Login failures

    public func recordLoginFailure(subject: String, window: TimeInterval, now: Date) async throws -> LoginFailures {
        let current = Self.millis(now)
        let end = Self.millis(now.addingTimeInterval(window))
        // Every SET expression reads the row as it was: a closed window restarts at one.
        let rows = try await query(
            """
            INSERT INTO login_failures (subject, count, window_end) VALUES (?1, 1, ?3)
            ON CONFLICT (subject) DO UPDATE SET
                count = CASE WHEN window_end <= ?2 THEN 1 ELSE count + 1 END,
                window_end = CASE WHEN window_end <= ?2 THEN ?3 ELSE window_end END
            RETURNING count, window_end
            """,
            [.text(subject), .integer(current), .integer(end)]
        )
        guard let count = rows.first?.column("count")?.integer, let windowEnd = rows.first?.column("window_end")?.integer
        else { throw SignetError(.storeUnavailable, "the login failure count was not returned") }
        return LoginFailures(count: count, windowEnd: Self.date(millis: windowEnd))
    }

    public func loginFailures(subjects: [String], now: Date) async throws -> [String: LoginFailures] {
        guard !subjects.isEmpty else { return [:] }
        let marks = subjects.map { _ in "?" }.joined(separator: ", ")
        let rows = try await query(
            "SELECT subject, count, window_end FROM login_failures WHERE window_end > ? AND subject IN (\(marks))",
            [.integer(Self.millis(now))] + subjects.map { .text($0) }
        )
        var found: [String: LoginFailures] = [:]
        for row in rows {
            guard let subject = row.column("subject")?.string, let count = row.column("count")?.integer,
                let end = row.column("window_end")?.integer
            else { continue }
            found[subject] = LoginFailures(count: count, windowEnd: Self.date(millis: end))
        }
        return found
    }

    public func clearLoginFailures(subject: String) async throws {
        try await run("DELETE FROM login_failures WHERE subject = ?", [.text(subject)])
    }

    // MARK: Server secrets

    public func serverSecret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8] {
        try await run(
            "INSERT INTO server_secrets (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [.text(name), .text(Base64.encode(proposed))]
        )
        guard let text = try await query("SELECT value FROM server_secrets WHERE name = ?", [.text(name)]).first?
            .column("value")?.string, let value = Base64.decode(text)
        else { throw SignetError(.storeUnavailable, "the server secret \(name) cannot be read") }
        return value
    }

    // MARK: Rows

    static var digestColumns: String {
        DigestAlgorithm.allCases.map { "ha1_\($0.columnSuffix), userhash_\($0.columnSuffix)" }.joined(separator: ", ")
    }

    private static func account(_ row: SQLiteRow) throws -> AccountRecord {
        guard let name = row.column("name")?.string, let realm = row.column("realm")?.string,
            let created = row.column("created_at")?.integer, let updated = row.column("updated_at")?.integer
        else { throw SignetError(.storeUnavailable, "an accounts row is incomplete") }
        var digests: [DigestAlgorithm: AccountRecord.DigestSecret] = [:]
        for algorithm in DigestAlgorithm.allCases {
            if let ha1 = row.column("ha1_\(algorithm.columnSuffix)")?.string,
                let userhash = row.column("userhash_\(algorithm.columnSuffix)")?.string
            {
                digests[algorithm] = .init(ha1: ha1, userhash: userhash)
            }
        }
        return AccountRecord(
            name: name,
            realm: realm,
            basicHash: row.column("basic_hash")?.string,
            digests: digests,
            createdAt: date(millis: created),
            updatedAt: date(millis: updated)
        )
    }
}
