// SPDX-License-Identifier: Apache-2.0
import NIOPosix
import SignetCore
import Synchronization
// The SQLite that SQLiteNIO vendors (symbols prefixed `sqlite_nio_`). Not a product of sqlite-nio,
// but the same copy of the library its connections use: a second copy of SQLite in one process
// would break the POSIX locks they share on the database file (sqlite.org/howtocorrupt.html §2.2).
import VaporCSQLite

/// A connection of its own for nonce claims, with its statements prepared once.
///
/// SQLiteNIO prepares every query anew and has no API for prepared statements; for the claims,
/// which every verified request makes, the parse was a quarter of SQLite's time and SQLite about 8 µs
/// of a request on the benchmark VM (docs/benchmarks.md). A batch here is `BEGIN IMMEDIATE`, one
/// step of the prepared upsert per claim (each with its own verifier time), `COMMIT`: one commit per
/// batch, as before, and each claim's answer read straight from its own step.
///
/// Used by one batch at a time (``SQLiteNonceBatcher`` keeps one write in flight), on NIO's
/// blocking thread pool; opened with SQLite's full mutex all the same.
final class SQLiteClaimConnection: Sendable {
    private struct Statements {
        var begin: OpaquePointer
        var insert: OpaquePointer
        var commit: OpaquePointer
        var rollback: OpaquePointer
    }

    private struct Handles: @unchecked Sendable {
        // Owned by this object; used only inside `handles`' lock. `nil` statements: not yet prepared.
        var database: OpaquePointer
        var statements: Statements?
    }

    private let handles: Mutex<Handles?>
    private let threadPool: NIOThreadPool

    static let insertSQL = """
        INSERT INTO nonces (key_id, nonce, expires_at) VALUES (?1, ?2, ?3)
        ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = excluded.expires_at
        WHERE nonces.expires_at < ?4 RETURNING 1
        """

    private init(database: OpaquePointer, threadPool: NIOThreadPool) {
        self.threadPool = threadPool
        handles = Mutex(Handles(database: database, statements: nil))
    }

    /// Opens the database file at `path` (already created by the store's own connection), on the
    /// thread pool; ``prepare()`` once its schema is in place.
    static func open(path: String, threadPool: NIOThreadPool = .singleton) async throws -> SQLiteClaimConnection {
        // A second connection to an in-memory database would be a database of its own.
        guard !isInMemory(path) else {
            throw SignetError(
                .storeUnavailable,
                "SQLite: \(path.isEmpty ? "an empty path" : path) is an in-memory database; use {\"memory\": true} instead"
            )
        }
        return try await threadPool.runIfActive {
            var database: OpaquePointer?
            // The flags of SQLiteNIO's own connection, so a `file:` URI means the same file to both.
            let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_EXRESCODE
            guard sqlite_nio_sqlite3_open_v2(path, &database, flags, nil) == SQLITE_OK, let database else {
                let message = database.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
                sqlite_nio_sqlite3_close(database)
                throw SignetError(.storeUnavailable, "SQLite: cannot open \(path) for nonce claims: \(message)")
            }
            sqlite_nio_sqlite3_busy_timeout(database, 5000)
            return SQLiteClaimConnection(database: database, threadPool: threadPool)
        }
    }

    /// `:memory:`, the empty path (a temporary database) and `mode=memory` URIs.
    static func isInMemory(_ path: String) -> Bool {
        path.isEmpty || path == ":memory:" || (path.hasPrefix("file:") && (path.contains("mode=memory") || path.hasPrefix("file::memory:")))
    }

    /// Prepares the statements (the `nonces` table must exist).
    func prepare() async throws {
        try await threadPool.runIfActive {
            try self.handles.withLock { handles in
                guard let database = handles?.database else { throw Self.closed }
                // Per connection, as on the store's own (see SQLiteStore.open): a commit survives a
                // process crash without an fsync of its own.
                guard sqlite_nio_sqlite3_exec(database, "PRAGMA synchronous=NORMAL", nil, nil, nil) == SQLITE_OK else {
                    throw Self.failure(database)
                }
                var prepared: [OpaquePointer] = []
                for sql in ["BEGIN IMMEDIATE", Self.insertSQL, "COMMIT", "ROLLBACK"] {
                    var statement: OpaquePointer?
                    let flags = UInt32(SQLITE_PREPARE_PERSISTENT)
                    guard sqlite_nio_sqlite3_prepare_v3(database, sql, -1, flags, &statement, nil) == SQLITE_OK,
                        let statement
                    else {
                        for statement in prepared { sqlite_nio_sqlite3_finalize(statement) }
                        throw SignetError(
                            .storeUnavailable,
                            "SQLite: cannot prepare a nonce claim: \(String(cString: sqlite_nio_sqlite3_errmsg(database)))"
                        )
                    }
                    prepared.append(statement)
                }
                handles?.statements = Statements(
                    begin: prepared[0], insert: prepared[1], commit: prepared[2], rollback: prepared[3]
                )
            }
        }
    }

    private static let closed = SignetError(.storeUnavailable, "SQLite: the store is shut down")

    /// One claim: the pair, when it lapses, and the verifier's time (a held pair whose claim lapsed
    /// before it is taken over).
    struct Claim: Sendable {
        var keyID: String
        var nonce: String
        var expiry: Int
        var now: Int
    }

    /// Runs `work` on the connection's thread pool, told whether the pool still runs (a pool shut
    /// down runs it at once with `false`): for a writer that waits on no task (``SQLiteNonceBatcher``).
    func onThreadPool(_ work: @escaping @Sendable (_ active: Bool) -> Void) {
        threadPool.submit { state in work(state == .active) }
    }

    /// Writes `claims` in one transaction, on the calling thread — the thread pool's
    /// (``onThreadPool(_:)``); whether each was won, in order. All or nothing: on any failure the
    /// transaction is rolled back and nothing is claimed.
    func writeNow(_ claims: [Claim]) throws -> [Bool] {
        try handles.withLock { handles in
            guard let database = handles?.database, let statements = handles?.statements else { throw Self.closed }
            try Self.step(statements.begin, on: database)
            var won: [Bool] = []
            won.reserveCapacity(claims.count)
            do {
                for claim in claims {
                    won.append(try Self.claim(claim, with: statements.insert, on: database))
                }
                try Self.step(statements.commit, on: database)
            } catch {
                sqlite_nio_sqlite3_step(statements.rollback)
                sqlite_nio_sqlite3_reset(statements.rollback)
                // A transaction left open would refuse every later BEGIN: close instead, so claims
                // fail as `store_unavailable` rather than hang on a broken connection.
                if sqlite_nio_sqlite3_get_autocommit(database) == 0 { Self.close(&handles) }
                throw error
            }
            return won
        }
    }

    /// `true` when the upsert inserted the pair or took over a lapsed one (it returns a row).
    private static func claim(_ claim: Claim, with insert: OpaquePointer, on database: OpaquePointer) throws -> Bool {
        defer {
            sqlite_nio_sqlite3_reset(insert)
            sqlite_nio_sqlite3_clear_bindings(insert)
        }
        sqlite_nio_sqlite3_bind_text64(insert, 1, claim.keyID, UInt64(claim.keyID.utf8.count), transient, UInt8(SQLITE_UTF8))
        sqlite_nio_sqlite3_bind_text64(insert, 2, claim.nonce, UInt64(claim.nonce.utf8.count), transient, UInt8(SQLITE_UTF8))
        sqlite_nio_sqlite3_bind_int64(insert, 3, Int64(claim.expiry))
        sqlite_nio_sqlite3_bind_int64(insert, 4, Int64(claim.now))
        switch sqlite_nio_sqlite3_step(insert) {
        case SQLITE_ROW:
            // With RETURNING, SQLite makes the change on the first step; this one only finishes it.
            guard sqlite_nio_sqlite3_step(insert) == SQLITE_DONE else { throw failure(database) }
            return true
        case SQLITE_DONE:
            return false
        default:
            throw failure(database)
        }
    }

    private static func step(_ statement: OpaquePointer, on database: OpaquePointer) throws {
        defer { sqlite_nio_sqlite3_reset(statement) }
        guard sqlite_nio_sqlite3_step(statement) == SQLITE_DONE else { throw failure(database) }
    }

    private static func failure(_ database: OpaquePointer) -> SignetError {
        SignetError(.storeUnavailable, "SQLite: \(String(cString: sqlite_nio_sqlite3_errmsg(database)))")
    }

    /// SQLite copies the bound text (`SQLITE_TRANSIENT`, a macro Swift cannot import).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Finalizes the statements and closes the connection; later writes fail as `store_unavailable`.
    func close() async throws {
        try await threadPool.runIfActive { self.handles.withLock { Self.close(&$0) } }
    }

    /// A backstop for a store that was never shut down (or failed while opening).
    deinit {
        handles.withLock { Self.close(&$0) }
    }

    private static func close(_ handles: inout Handles?) {
        guard let open = handles else { return }
        if let statements = open.statements {
            for statement in [statements.begin, statements.insert, statements.commit, statements.rollback] {
                sqlite_nio_sqlite3_finalize(statement)
            }
        }
        sqlite_nio_sqlite3_close_v2(open.database)
        handles = nil
    }
}
