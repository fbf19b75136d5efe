// SPDX-License-Identifier: Apache-2.0
import Foundation
import PropertyBased
import SignetCore
@testable import SignetSQLite
import SignetTestSupport
import Testing

/// What is SQLite's own in the nonce claims: they go through a connection of their own with
/// prepared statements (SQLiteClaimConnection), so they must agree with the store's connection,
/// outlive a reopen, and fail cleanly once the store is shut down.
@Suite(.awaitsCleanups) struct SQLiteClaimTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func path() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("signet-claims-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("signet.sqlite").path
    }

    @Test func claimsAreSeenByTheStoreAndSurviveAReopen() async throws {
        let path = try Self.path()
        let store = try await SQLiteStore.open(path: path)
        for index in 0..<5 {
            #expect(try await store.claim(keyID: "k", nonce: "n\(index)", until: t0.addingTimeInterval(10), now: t0))
        }
        // The store's own connection sweeps what the claims' connection wrote: the five that lapsed,
        // once they are past what a claim is kept for after it lapses.
        #expect(try await store.claim(keyID: "k", nonce: "late", until: t0.addingTimeInterval(100), now: t0))
        #expect(try await store.sweep(now: t0.addingTimeInterval(11)) == 0)
        #expect(try await store.sweep(now: t0.addingTimeInterval(11 + NonceRetention.afterExpiry)) == 5)
        try await store.shutdown()

        let reopened = try await SQLiteStore.open(path: path)
        Cleanup.after { try await reopened.shutdown() }
        #expect(try await !reopened.claim(keyID: "k", nonce: "late", until: t0.addingTimeInterval(200), now: t0.addingTimeInterval(12)))
        #expect(try await reopened.claim(keyID: "k", nonce: "n0", until: t0.addingTimeInterval(200), now: t0.addingTimeInterval(12)))
    }

    @Test func aClaimAfterShutdownIsStoreUnavailable() async throws {
        let store = try await SQLiteStore.open(path: try Self.path())
        try await store.shutdown()
        let error = await #expect(throws: SignetError.self) {
            try await store.claim(keyID: "k", nonce: "n", until: self.t0.addingTimeInterval(10), now: self.t0)
        }
        #expect(error?.code == .storeUnavailable)
    }

    @Test(arguments: [":memory:", "", "file::memory:?cache=shared", "file:x?mode=memory"])
    func anInMemoryDatabaseIsRefusedWithWhatToUseInstead(_ path: String) async throws {
        let error = await #expect(throws: SignetError.self) { _ = try await SQLiteStore.open(path: path) }
        #expect(error?.code == .storeUnavailable && error?.reason.contains("memory") == true, "\(String(describing: error))")
    }

    /// A file that is not a database fails the first statement: the error comes back, both
    /// connections are closed (SQLiteNIO asserts that in debug builds), and the file is untouched.
    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftAsItWas() async throws {
        let path = try Self.path()
        let garbage = Data(repeating: 0x5A, count: 8192)
        try garbage.write(to: URL(fileURLWithPath: path))
        let error = await #expect(throws: SignetError.self) { _ = try await SQLiteStore.open(path: path) }
        #expect(error?.code == .storeUnavailable)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }
    /// Two stores on one file, as two gateway processes are: each decides in memory, so each must
    /// read what the other appended before it decides. Whatever the interleaving, the pair of them
    /// answers as one exact store would: a pair is won when no claim of it holds at that time.
    @Test func twoStoresOnOneFileAnswerAsOne() async throws {
        let path = try Self.path()
        let stores = [try await SQLiteStore.open(path: path), try await SQLiteStore.open(path: path)]
        Cleanup.after { for store in stores { try await store.shutdown() } }
        // (which store, which pair, its lifetime in seconds, seconds passing before it)
        let claims = zip(Gen.int(in: 0...1), Gen.int(in: 0...5), Gen.int(in: 1...20), Gen.int(in: 0...8)).array(of: 1...30)
        let rounds = Counter()
        await propertyCheck(count: 40, input: claims) { drawn in
            let round = rounds.next()
            var held: [Int: Int] = [:]
            var now = 0
            for (store, pair, lifetime, passing) in drawn {
                now += passing
                let at = self.t0.addingTimeInterval(TimeInterval(now))
                let won = try? await stores[store].claim(
                    keyID: "k", nonce: "r\(round)-\(pair)", until: at.addingTimeInterval(TimeInterval(lifetime)), now: at
                )
                let expected = (held[pair] ?? .min) < now
                #expect(won == expected, "\(drawn)")
                if expected { held[pair] = now + lifetime }
            }
        }
    }

    /// Each property round's own pairs (a shrunk round replays its claims under a fresh name).
    final class Counter: @unchecked Sendable {
        private var value = 0
        func next() -> Int {
            value += 1
            return value
        }
    }

    /// The same race as `concurrentClaimsOfOnePairSucceedExactlyOnce`, across two stores on one file:
    /// one winner per pair, whichever store it claimed through.
    @Test func concurrentClaimsThroughTwoStoresOnOneFileWinOncePerPair() async throws {
        let path = try Self.path()
        let stores = [try await SQLiteStore.open(path: path), try await SQLiteStore.open(path: path)]
        Cleanup.after { for store in stores { try await store.shutdown() } }
        let expiry = t0.addingTimeInterval(60)
        let now = t0
        let wins = try await withThrowingTaskGroup(of: Int?.self) { group in
            for attempt in 0..<400 {
                group.addTask {
                    let pair = attempt % 20
                    return try await stores[attempt % 2].claim(keyID: "k", nonce: "race-\(pair)", until: expiry, now: now) ? pair : nil
                }
            }
            var wins: [Int] = []
            for try await pair in group { if let pair { wins.append(pair) } }
            return wins
        }
        #expect(wins.sorted() == Array(0..<20))
    }

    /// A batch written by the claims' connection, several rows to a statement where it holds
    /// enough (16, 4, then 1: ``SQLiteClaimConnection/appendRows``): each won claim's row is in the file in claim
    /// order, with its own pair and expiry, and a pair twice in the batch is won by the first only.
    /// Sizes around the statement's row count, with losers among them; read back by Python's sqlite3.
    @Test(arguments: [0, 1, 4, 5, 15, 16, 17, 20, 31, 32, 33, 50])
    func aBatchWritesEachWonClaimsRowInOrder(_ size: Int) async throws {
        let path = try Self.path()
        try await SQLiteStore.open(path: path).shutdown()
        let connection = try await SQLiteClaimConnection.open(path: path)
        _ = try await connection.prepare()
        // Every seventh claim repeats the one before it; expiries differ, so a row bound to another
        // claim's parameters shows.
        let claims = (0..<size).map { index in
            SQLiteClaimConnection.Claim(keyID: "k", nonce: "n\(index % 7 == 6 ? index - 1 : index)", expiry: 1_000 + index, now: 0)
        }
        let won = try connection.writeNow(claims)
        try await connection.close()
        #expect(won == (0..<size).map { $0 % 7 != 6 })
        let rows = try await Self.rows(path)
        #expect(rows == zip(claims, won).filter(\.1).map { "k \($0.0.nonce) \($0.0.expiry)" })
    }

    /// A row refused in the middle of a batch (a trigger stands for a full disk or a broken file):
    /// the batch fails as `store_unavailable` with nothing written and nothing won — the rows of the
    /// statements before it rolled back — and the next batch, the same pairs among it, goes through.
    @Test(arguments: [3, 20])
    func aBatchThatFailsPartWayWritesNothingAndTheNextOneGoesThrough(_ poisoned: Int) async throws {
        let path = try Self.path()
        try await SQLiteStore.open(path: path).shutdown()
        let trigger = "CREATE TRIGGER poison BEFORE INSERT ON nonce_log WHEN NEW.nonce = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END"
        let created = try await SignetProcess.run("python3", ["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()", path, trigger])
        #expect(created.status == 0, "\(created.stderr)")
        let connection = try await SQLiteClaimConnection.open(path: path)
        _ = try await connection.prepare()
        let claims = (0..<24).map { SQLiteClaimConnection.Claim(keyID: "k", nonce: "n\($0)", expiry: 1_000 + $0, now: 0) }
        var poisonedBatch = claims
        poisonedBatch[poisoned].nonce = "poison"
        #expect {
            _ = try connection.writeNow(poisonedBatch)
        } throws: { ($0 as? SignetError)?.code == .storeUnavailable }
        #expect(try await Self.rows(path).isEmpty)
        #expect(try connection.writeNow(claims) == Array(repeating: true, count: 24))
        try await connection.close()
        #expect(try await Self.rows(path) == claims.map { "k \($0.nonce) \($0.expiry)" })
    }

    /// `nonce_log`'s rows in `seq` order, as Python's sqlite3 reads the file.
    static func rows(_ path: String) async throws -> [String] {
        let script = [
            "import sqlite3, sys",
            "for key, nonce, expiry in sqlite3.connect(sys.argv[1]).execute('SELECT key_id, nonce, expires_at FROM nonce_log ORDER BY seq'):",
            "    print(key, nonce, expiry)",
        ].joined(separator: "\n")
        let read = try await SignetProcess.run("python3", ["-c", script, path])
        guard read.status == 0 else { throw SignetError(.storeUnavailable, read.stderr) }
        return read.stdout.split(separator: "\n").map(String.init)
    }

    /// A file an earlier release wrote (schema 10, claims in `nonces`): its live claims move to the
    /// log on open and still refuse their replays; a lapsed one can be claimed again.
    @Test func claimsOfAnEarlierReleaseAreKeptThroughTheUpgrade() async throws {
        let path = try Self.path()
        try await SQLiteStore.open(path: path).shutdown()
        let live = Int(t0.addingTimeInterval(60).timeIntervalSince1970 * 1000)
        let lapsed = Int(t0.addingTimeInterval(-1).timeIntervalSince1970 * 1000)
        // What schema 10 left: the claims table it had, and no log.
        let script = [
            "import sqlite3, sys",
            "c = sqlite3.connect(sys.argv[1])",
            "c.execute('DROP TABLE nonce_log')",
            "c.execute('DELETE FROM signet_schema WHERE version = 11')",
            "c.execute('CREATE TABLE nonces (key_id TEXT NOT NULL, nonce TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (key_id, nonce)) WITHOUT ROWID')",
            "c.execute('CREATE INDEX nonces_expiry ON nonces (expires_at)')",
            "c.execute(\"INSERT INTO nonces VALUES ('k', 'held', ?), ('k', 'gone', ?)\", (int(sys.argv[2]), int(sys.argv[3])))",
            "c.commit()",
        ].joined(separator: "\n")
        let downgraded = try await SignetProcess.run("python3", ["-c", script, path, "\(live)", "\(lapsed)"])
        #expect(downgraded.status == 0, "\(downgraded.stderr)")

        let store = try await SQLiteStore.open(path: path)
        Cleanup.after { try await store.shutdown() }
        #expect(try await !store.claim(keyID: "k", nonce: "held", until: t0.addingTimeInterval(120), now: t0))
        #expect(try await store.claim(keyID: "k", nonce: "gone", until: t0.addingTimeInterval(120), now: t0))
        #expect(try await store.claim(keyID: "k", nonce: "new", until: t0.addingTimeInterval(120), now: t0))
    }

    /// What the store's own sweep deletes from the file, a process that has not read it in yet never
    /// learns: a sweep at a later claim's time past a claim's expiry must leave it for a replay that
    /// comes, with a time inside its window, through another process on the file.
    @Test func aSweptFileStillRefusesAReplayThroughAnotherProcess() async throws {
        let path = try Self.path()
        let store = try await SQLiteStore.open(path: path)
        Cleanup.after { try await store.shutdown() }
        let expiry = t0.addingTimeInterval(10)
        #expect(try await store.claim(keyID: "k", nonce: "held", until: expiry, now: t0))
        _ = try await store.sweep(now: expiry.addingTimeInterval(5))
        let other = try await SQLiteStore.open(path: path)
        Cleanup.after { try await other.shutdown() }
        #expect(try await !other.claim(keyID: "k", nonce: "held", until: expiry, now: expiry.addingTimeInterval(-0.5)))
    }
}
