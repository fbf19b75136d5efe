// SPDX-License-Identifier: Apache-2.0
import Foundation
import PropertyBased
import SignetCore
import SignetSQLite
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

    /// A batch under load holds dozens of claims, appended several rows to a statement: each won
    /// claim's row is in the file exactly as claimed — its pair and its own expiry — in one unbroken
    /// run of `seq`, and a duplicate in the batch wins once. Read back by Python's sqlite3, and by a
    /// second store, which refuses every one.
    @Test func aLargeBatchWritesEachWonClaimsRowAsClaimed() async throws {
        let path = try Self.path()
        let store = try await SQLiteStore.open(path: path)
        // Distinct expiries, so a row bound to the wrong claim's parameters shows.
        let claims = (0..<120).map { index in (nonce: "batch-\(index % 100)", expiry: t0.addingTimeInterval(Double(60 + index % 100))) }
        let won = try await withThrowingTaskGroup(of: String?.self) { group in
            for claim in claims {
                group.addTask { try await store.claim(keyID: "k", nonce: claim.nonce, until: claim.expiry, now: self.t0) ? claim.nonce : nil }
            }
            var won: [String] = []
            for try await nonce in group { if let nonce { won.append(nonce) } }
            return won
        }
        try await store.shutdown()
        #expect(won.sorted() == (0..<100).map { "batch-\($0)" }.sorted())

        let script = [
            "import sqlite3, sys",
            "rows = sqlite3.connect(sys.argv[1]).execute('SELECT seq, key_id, nonce, expires_at FROM nonce_log ORDER BY seq').fetchall()",
            "assert [r[0] for r in rows] == list(range(rows[0][0], rows[0][0] + len(rows))), rows",
            "for seq, key, nonce, expiry in rows: print(key, nonce, expiry)",
        ].joined(separator: "\n")
        let read = try await SignetProcess.run("python3", ["-c", script, path])
        #expect(read.status == 0, "\(read.stderr)")
        let expected = (0..<100).map { index in
            "k batch-\(index) \(Int(t0.addingTimeInterval(Double(60 + index)).timeIntervalSince1970 * 1000))"
        }
        #expect(read.stdout.split(separator: "\n").map(String.init).sorted() == expected.sorted())

        let other = try await SQLiteStore.open(path: path)
        Cleanup.after { try await other.shutdown() }
        for index in 0..<100 {
            #expect(try await !other.claim(keyID: "k", nonce: "batch-\(index)", until: t0.addingTimeInterval(200), now: t0))
        }
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
