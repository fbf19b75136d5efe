// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetPostgres
import SignetSQLite
import SignetStore
import SignetTestSupport
import Testing

/// An old release that meets a schema a newer one migrated refuses to start, naming both versions,
/// rather than read and write tables it does not know (docs/operations.md, "Upgrades").
@Suite struct SchemaVersionTests {
    @Test func anOldReleaseRefusesASQLiteSchemaANewerOneMigrated() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("signet.sqlite").path
        try await SQLiteStore.open(path: path).shutdown()
        // What a newer release's migration leaves behind.
        let marked = try await SignetProcess.run(
            "python3",
            ["-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('INSERT INTO signet_schema (version) VALUES (999)'); c.commit()", path]
        )
        #expect(marked.status == 0, "\(marked.stderr)")
        let error = await #expect(throws: SignetError.self) { _ = try await SQLiteStore.open(path: path) }
        #expect(error?.code == .storeUnavailable && error?.reason.contains("version 999, newer than") == true, "\(String(describing: error))")
    }

    @Test(.enabled(if: TestPostgres.url != nil, "no PostgreSQL server (SIGNET_POSTGRES_URL)"))
    func anOldReleaseRefusesAPostgreSQLSchemaANewerOneMigrated() async throws {
        let url = try await PostgresStore.createDatabase(
            url: try #require(TestPostgres.url),
            named: "signet_schema_\(UInt64.random(in: 0...UInt64.max))"
        )
        try await PostgresStore.connect(url: url).shutdown()
        let psql = try #require(
            (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.sorted().last.map { "/usr/lib/postgresql/\($0)/bin/psql" }
        )
        let marked = try await SignetProcess.run(psql, [url, "-qc", "INSERT INTO signet_schema (version) VALUES (999)"])
        #expect(marked.status == 0, "\(marked.stderr)")
        let error = await #expect(throws: SignetError.self) { _ = try await PostgresStore.connect(url: url, timeout: .seconds(10)) }
        #expect(error?.code == .storeUnavailable && error?.reason.contains("version 999, newer than") == true, "\(String(describing: error))")
    }
}
