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
/// of a request on the benchmark VM (docs/benchmarks.md).
///
/// A batch is `BEGIN IMMEDIATE` (SQLite's write lock, which every process on the file takes in
/// turn), the rows other processes appended to `nonce_log` since this one last read, read into the
/// ``NonceLogIndex``; then each claim decided by the index and, when won, appended to the log;
/// `COMMIT`. The index learns the batch's own claims only once the commit succeeded, so a claim is
/// never answered `true` without its row in the file: all or nothing, as before, one commit per batch.
///
/// Used by one batch at a time (``SQLiteNonceBatcher`` keeps one write in flight), on NIO's
/// blocking thread pool; opened with SQLite's full mutex all the same.
final class SQLiteClaimConnection: Sendable {
    private struct Statements {
        var begin: OpaquePointer
        var readSince: OpaquePointer
        var commit: OpaquePointer
        var rollback: OpaquePointer
        /// An `INSERT` of each of ``appendRows`` rows, most rows first.
        var appends: [OpaquePointer]

        var all: [OpaquePointer] { [begin, readSince, commit, rollback] + appends }
    }

    private struct Handles: @unchecked Sendable {
        // Owned by this object; used only inside `handles`' lock. `nil` statements: not yet prepared.
        var database: OpaquePointer
        var statements: Statements?
        var index = NonceLogIndex()
    }

    private let handles: Mutex<Handles?>
    private let threadPool: NIOThreadPool

    static let readSinceSQL = "SELECT seq, key_id, nonce, expires_at FROM nonce_log WHERE seq > ?1 ORDER BY seq"
    /// Won claims are appended up to 16 to a statement, the most rows that are left first (31 rows
    /// take 16, 4, 4, 4, 1, 1, 1): a batch under load holds dozens, and each statement costs its
    /// own run of SQLite's VM and its own update of `sqlite_sequence` (AUTOINCREMENT).
    static let appendRows = [16, 4, 1]
    static func appendSQL(rows: Int) -> String {
        "INSERT INTO nonce_log (key_id, nonce, expires_at) VALUES "
            + (0..<rows).map { "(?\($0 * 3 + 1), ?\($0 * 3 + 2), ?\($0 * 3 + 3))" }.joined(separator: ", ")
    }

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

    /// Prepares the statements (the `nonce_log` table must exist) and reads the log's claims in;
    /// returns how many rows it read.
    func prepare() async throws -> Int {
        try await threadPool.runIfActive {
            try self.handles.withLock { handles in
                guard let database = handles?.database else { throw Self.closed }
                // Per connection, as on the store's own (see SQLiteStore.open): a commit survives a
                // process crash without an fsync of its own.
                guard sqlite_nio_sqlite3_exec(database, "PRAGMA synchronous=NORMAL", nil, nil, nil) == SQLITE_OK else {
                    throw Self.failure(database)
                }
                var prepared: [OpaquePointer] = []
                for sql in ["BEGIN IMMEDIATE", Self.readSinceSQL, "COMMIT", "ROLLBACK"] + Self.appendRows.map(Self.appendSQL(rows:)) {
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
                    begin: prepared[0], readSince: prepared[1], commit: prepared[2], rollback: prepared[3],
                    appends: Array(prepared[4...])
                )
            }
        }
        return try await readIn()
    }

    /// Reads in the rows appended since the index last read, on the thread pool: at open, and after
    /// something other than this connection filled the log (`signet-bench nonces`); returns how
    /// many rows it read. Every row not yet swept, lapsed ones too: the store has no clock of its
    /// own, and a claim's own time says whether a row still holds (see ``NonceStore``).
    @discardableResult
    func readIn() async throws -> Int {
        try await threadPool.runIfActive {
            try self.handles.withLock { handles in
                guard let database = handles?.database, let statements = handles?.statements else { throw Self.closed }
                return try Self.readIn(into: &handles!.index, with: statements.readSince, now: Int.min, on: database)
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
    /// transaction is rolled back, the index learns none of the batch, and nothing is claimed.
    func writeNow(_ claims: [Claim]) throws -> [Bool] {
        try handles.withLock { handles in
            guard let database = handles?.database, let statements = handles?.statements else { throw Self.closed }
            try Self.step(statements.begin, on: database)
            var won: [Bool] = []
            won.reserveCapacity(claims.count)
            do {
                // Under the write lock: what every other process committed is in the file now, and
                // nothing more can be until this batch commits.
                let now = claims.lazy.map(\.now).min() ?? Int.min
                try Self.readIn(into: &handles!.index, with: statements.readSince, now: now, on: database)
                var digests: [NonceLogIndex.Digest] = []
                digests.reserveCapacity(claims.count)
                var inBatch = Set<NonceLogIndex.Digest>(minimumCapacity: claims.count)
                var rows: [Claim] = []
                rows.reserveCapacity(claims.count)
                for claim in claims {
                    let digest = NonceLogIndex.Digest(keyID: claim.keyID, nonce: claim.nonce)
                    digests.append(digest)
                    // A pair twice in one batch: the first claimant only.
                    let free = !handles!.index.isClaimed(digest, at: claim.now) && inBatch.insert(digest).inserted
                    if free { rows.append(claim) }
                    won.append(free)
                }
                try Self.append(rows, with: statements, on: database)
                try Self.step(statements.commit, on: database)
                let last = sqlite_nio_sqlite3_last_insert_rowid(database)
                for (index, claim) in claims.enumerated() where won[index] {
                    handles!.index.record(seq: last, digests[index], until: claim.expiry, now: claim.now)
                }
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

    /// Reads the log's rows after `index.lastSeen` into `index`, sweeping what lapsed before `now`;
    /// returns how many rows it read.
    @discardableResult
    private static func readIn(
        into index: inout NonceLogIndex, with readSince: OpaquePointer, now: Int, on database: OpaquePointer
    ) throws -> Int {
        defer {
            sqlite_nio_sqlite3_reset(readSince)
            sqlite_nio_sqlite3_clear_bindings(readSince)
        }
        sqlite_nio_sqlite3_bind_int64(readSince, 1, index.lastSeen)
        var rows = 0
        while true {
            switch sqlite_nio_sqlite3_step(readSince) {
            case SQLITE_ROW:
                rows += 1
                let seq = sqlite_nio_sqlite3_column_int64(readSince, 0)
                let digest = NonceLogIndex.Digest(keyID: text(readSince, column: 1), nonce: text(readSince, column: 2))
                index.record(seq: seq, digest, until: Int(sqlite_nio_sqlite3_column_int64(readSince, 3)), now: now)
            case SQLITE_DONE:
                return rows
            default:
                throw failure(database)
            }
        }
    }

    private static func text(_ statement: OpaquePointer, column: Int32) -> String {
        guard let bytes = sqlite_nio_sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Appends the won claims' rows to the log, in order: each statement the largest of
    /// ``appendRows`` that the rows left fill.
    private static func append(_ rows: [Claim], with statements: Statements, on database: OpaquePointer) throws {
        var start = 0
        while start < rows.count {
            // `appendRows` ends with 1, so some size always fits.
            let chosen = appendRows.firstIndex { $0 <= rows.count - start }!
            let statement = statements.appends[chosen]
            let end = start + appendRows[chosen]
            defer {
                sqlite_nio_sqlite3_reset(statement)
                sqlite_nio_sqlite3_clear_bindings(statement)
            }
            for (offset, claim) in rows[start..<end].enumerated() {
                let first = Int32(offset * 3)
                sqlite_nio_sqlite3_bind_text64(statement, first + 1, claim.keyID, UInt64(claim.keyID.utf8.count), transient, UInt8(SQLITE_UTF8))
                sqlite_nio_sqlite3_bind_text64(statement, first + 2, claim.nonce, UInt64(claim.nonce.utf8.count), transient, UInt8(SQLITE_UTF8))
                sqlite_nio_sqlite3_bind_int64(statement, first + 3, Int64(claim.expiry))
            }
            guard sqlite_nio_sqlite3_step(statement) == SQLITE_DONE else { throw failure(database) }
            start = end
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
            for statement in statements.all { sqlite_nio_sqlite3_finalize(statement) }
        }
        sqlite_nio_sqlite3_close_v2(open.database)
        handles = nil
    }
}
