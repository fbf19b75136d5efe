// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetPostgres
import SignetSQLite
import SignetStore
import SignetTestSupport
import Testing

/// One conformance suite, run unchanged against every ``SignetStorage``: memory, SQLite, PostgreSQL.
@Suite(.awaitsCleanups) struct StoreConformanceTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case memory, sqlite, postgres
        var testDescription: String { rawValue }
    }

    static let kinds: [Kind] = Kind.allCases.filter { $0 != .postgres || TestPostgres.url != nil }

    /// A fresh, empty store of `kind`.
    static func makeStore(_ kind: Kind) async throws -> any SignetStorage {
        switch kind {
        case .memory: return MemoryStore()
        case .sqlite:
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("signet-store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            return try await SQLiteStore.open(path: dir.appendingPathComponent("signet.sqlite").path)
        case .postgres:
            // A database of its own per test: tests run in parallel.
            let url = try await PostgresStore.createDatabase(
                url: try #require(TestPostgres.url),
                named: "signet_t_\(UInt64.random(in: 0...UInt64.max))"
            )
            return try await PostgresStore.connect(url: url)
        }
    }

    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func device(_ id: String, keyID: String? = nil, counter: UInt64 = 0) throws -> DeviceRecord {
        let key = try SigningKey.generate(.p256)
        return DeviceRecord(
            deviceID: id,
            keyID: keyID ?? "key-\(id)",
            algorithm: "ecdsa-p256-sha256",
            publicKeyJWK: key.verificationKey.jwk.jsonString,
            trustLevel: .deviceKey,
            counter: counter,
            createdAt: Date(timeIntervalSince1970: 1_700_000_000),
            attributes: ["environment": "development", "note": "ünïcode"]
        )
    }

    static func expectCode(_ code: SignetError.Code, _ body: () async throws -> Void) async {
        let error = await #expect(throws: SignetError.self) { try await body() }
        #expect(error?.code == code)
    }

    // MARK: Devices

    /// A value a store cannot keep (PostgreSQL refuses NUL in text) is the request's fault: never
    /// `store_unavailable`, which would let a client make the gateway take the store for down.
    @Test(arguments: kinds)
    func aValueTheStoreRefusesIsNotAnOutage(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        defer { Task { try? await store.shutdown() } }
        for lookup in [
            { _ = try await store.device(id: "dev\u{0}ice") },
            { _ = try await store.account(name: "mu\u{0}fasa") },
            { _ = try await store.claim(keyID: "k\u{0}", nonce: "n", until: Date(timeIntervalSinceNow: 60), now: Date()) },
        ] as [@Sendable () async throws -> Void] {
            do {
                try await lookup()
            } catch let error as SignetError {
                #expect(error.code != .storeUnavailable, "\(error)")
            }
        }
    }

    @Test(arguments: kinds)
    func devicesRegisterLookUpAndRevoke(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let device = try Self.device("d1")
        try await store.registerDevice(device)
        #expect(try await store.device(id: "d1") == device)
        #expect(try await store.device(keyID: "key-d1") == device)
        #expect(try await store.device(keyID: "nope") == nil)
        await Self.expectCode(.deviceExists) { try await store.registerDevice(try Self.device("d1", keyID: "other")) }
        await Self.expectCode(.deviceExists) { try await store.registerDevice(try Self.device("d2", keyID: "key-d1")) }
        #expect(try await store.revokeDevice(id: "d1", at: t0.addingTimeInterval(5)))
        #expect(try await !store.revokeDevice(id: "nope", at: t0))
        let revoked = try #require(try await store.device(id: "d1"))
        #expect(revoked.status == .revoked)
        #expect(revoked.revokedAt == t0.addingTimeInterval(5))
        #expect(try revoked.keyRecord().revoked)
    }

    static func pinReport(_ id: String, at seen: Date, source: String? = nil) -> PinReportRecord {
        PinReportRecord(
            id: id,
            hostname: "api.example.com",
            reason: "no-matching-pin",
            servedPins: "sha256/\(id)",
            firstSeen: seen,
            lastSeen: seen,
            source: source,
            json: "{\"id\":\"\(id)\"}"
        )
    }

    @Test(arguments: kinds)
    func pinReportsAreGroupedKeptMostRecentFirstAndSweptAfterRetention(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        try await store.recordPinReport(Self.pinReport("r1", at: t0), limit: 10)
        try await store.recordPinReport(Self.pinReport("r2", at: t0.addingTimeInterval(30)), limit: 10)
        // The same report again: counted in its group, which keeps its first report and first time.
        var again = Self.pinReport("r1", at: t0.addingTimeInterval(60), source: "10.0.0.7")
        again.json = "{\"second\":true}"
        try await store.recordPinReport(again, limit: 10)
        let groups = try await store.pinReports(limit: 10)
        #expect(groups.map(\.id) == ["r1", "r2"])
        #expect(groups[0].count == 2 && groups[0].firstSeen == t0 && groups[0].lastSeen == t0.addingTimeInterval(60))
        #expect(groups[0].source == "10.0.0.7" && groups[0].json == "{\"id\":\"r1\"}")
        #expect(try await store.pinReports(limit: 1).map(\.id) == ["r1"])
        // Just inside retention for the group seen last, just past it for the other.
        _ = try await store.sweep(now: t0.addingTimeInterval(PinReportRecord.retention + 45))
        #expect(try await store.pinReports(limit: 10).map(\.id) == ["r1"])
    }

    @Test(arguments: kinds)
    func pinReportGroupsAreBoundedAndTheLeastRecentlySeenGoFirst(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        for index in 0..<3 {
            #expect(try await store.recordPinReport(Self.pinReport("g\(index)", at: t0.addingTimeInterval(Double(index))), limit: 3) == 0)
        }
        // g0 is reported again: now g1 is the least recently seen.
        #expect(try await store.recordPinReport(Self.pinReport("g0", at: t0.addingTimeInterval(10)), limit: 3) == 0)
        #expect(try await store.recordPinReport(Self.pinReport("g3", at: t0.addingTimeInterval(11)), limit: 3) == 1)
        #expect(Set(try await store.pinReports(limit: 10).map(\.id)) == ["g0", "g2", "g3"])
        // Two hundred distinct one-off reports against a bound of three: three groups, never more,
        // and the group several reports agree on (g0) outlives the spray.
        for index in 0..<200 {
            try await store.recordPinReport(Self.pinReport("flood\(index)", at: t0.addingTimeInterval(20 + Double(index))), limit: 3)
        }
        #expect(try await store.pinReportGroupCount() == 3)
        #expect(try await store.pinReports(limit: 10).map(\.id) == ["flood199", "flood198", "g0"])
    }

    @Test(arguments: kinds)
    func countersOnlyMoveForward(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        try await store.registerDevice(try Self.device("c", counter: 5))
        #expect(try await !store.advanceCounter(deviceID: "c", to: 5))
        #expect(try await !store.advanceCounter(deviceID: "c", to: 4))
        #expect(try await store.advanceCounter(deviceID: "c", to: 6))
        #expect(try await !store.advanceCounter(deviceID: "missing", to: 9))
        #expect(try await store.device(id: "c")?.counter == 6)
        // Concurrent advances to the same value: exactly one wins.
        let wins = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { (try? await store.advanceCounter(deviceID: "c", to: 7)) == true } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(wins == 1)
    }

    /// The store runs ``CounterWindow`` atomically: a random walk of counters around the highest,
    /// with a window, gets the same answers from the store as from the reference.
    @Test(arguments: kinds)
    func counterWindowsMatchTheReference(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        for width in [0, 1, 8, 63] {
            let id = "w\(width)"
            try await store.registerDevice(try Self.device(id, counter: 100))
            var reference = CounterWindow(highest: 100)
            var generator = SeededGenerator(seed: UInt64(width) + 1)
            for step in 0..<300 {
                // Mostly near the top, sometimes a jump ahead, sometimes far behind.
                let roll = UInt64.random(in: 0..<100, using: &generator)
                let value: UInt64 =
                    roll < 5
                    ? reference.highest + UInt64.random(in: 1...80, using: &generator)
                    : roll < 10
                        ? UInt64.random(in: 0...reference.highest, using: &generator)
                        : reference.highest + 3 - min(reference.highest, UInt64.random(in: 0...70, using: &generator))
                let expected = reference.accept(value, width: width)
                let answered = try await store.advanceCounter(deviceID: id, to: value, window: width)
                #expect(answered == expected, "width \(width), step \(step), counter \(value)")
            }
            #expect(try await store.device(id: id)?.counter == reference.highest)
        }
        // Concurrent callers with one counter inside the window: exactly one wins.
        try await store.registerDevice(try Self.device("race", counter: 50))
        let wins = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask { (try? await store.advanceCounter(deviceID: "race", to: 45, window: 8)) == true }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(wins == 1)
    }

    // MARK: Nonces

    /// Claims reach a store a little out of time order (a claim's `now` is read before its signature
    /// is checked): neither a later claim's time past a claim's expiry nor a sweep at that time may
    /// forget it while a replay can still come with a time inside its window (``NonceRetention``).
    @Test(arguments: kinds)
    func aReplayWhoseTimeIsBehindTheLatestClaimIsStillRefused(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let expiry = t0.addingTimeInterval(10)
        #expect(try await store.claim(keyID: "k", nonce: "held", until: expiry, now: t0))
        let later = expiry.addingTimeInterval(5)
        for index in 0..<200 {
            #expect(try await store.claim(keyID: "k", nonce: "later-\(index)", until: later.addingTimeInterval(10), now: later))
        }
        _ = try await store.sweep(now: later)
        #expect(try await !store.claim(keyID: "k", nonce: "held", until: expiry, now: expiry.addingTimeInterval(-0.5)))
    }

    @Test(arguments: kinds)
    func aNonceIsClaimedOnceUntilItExpires(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        #expect(try await store.claim(keyID: "k", nonce: "n", until: t0.addingTimeInterval(10), now: t0))
        #expect(
            try await !store.claim(
                keyID: "k",
                nonce: "n",
                until: t0.addingTimeInterval(20),
                now: t0.addingTimeInterval(9)
            )
        )
        #expect(try await store.claim(keyID: "k2", nonce: "n", until: t0.addingTimeInterval(10), now: t0))
        #expect(
            try await store.claim(
                keyID: "k",
                nonce: "n",
                until: t0.addingTimeInterval(30),
                now: t0.addingTimeInterval(11)
            )
        )
        #expect(
            try await !store.claim(
                keyID: "k",
                nonce: "n",
                until: t0.addingTimeInterval(30),
                now: t0.addingTimeInterval(12)
            )
        )
        // Sweeping removes expired claims only: the live one still blocks its replay.
        _ = try await store.sweep(now: t0.addingTimeInterval(25))
        #expect(
            try await !store.claim(
                keyID: "k",
                nonce: "n",
                until: t0.addingTimeInterval(40),
                now: t0.addingTimeInterval(26)
            )
        )
        #expect(
            try await store.claim(
                keyID: "k2",
                nonce: "n",
                until: t0.addingTimeInterval(40),
                now: t0.addingTimeInterval(26)
            )
        )
    }

    @Test(arguments: kinds)
    func concurrentClaimsOfOneNonceSucceedOnce(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let expiry = t0.addingTimeInterval(60)
        let now = t0
        let wins = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<100 {
                group.addTask { (try? await store.claim(keyID: "k", nonce: "race", until: expiry, now: now)) == true }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(wins == 1)
    }

    @Test(arguments: kinds)
    func concurrentClaimsOfDistinctNoncesAllSucceed(_ kind: Kind) async throws {
        let store = try await Self.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let expiry = t0.addingTimeInterval(60)
        let now = t0
        // Many claims at once, two per nonce: SQLite writes them in batches; each nonce is won once.
        let wins = await withTaskGroup(of: String?.self) { group in
            for index in 0..<600 {
                group.addTask {
                    (try? await store.claim(keyID: "k", nonce: "n\(index % 300)", until: expiry, now: now)) == true
                        ? "n\(index % 300)" : nil
                }
            }
            return await group.reduce(into: [String]()) { if let nonce = $1 { $0.append(nonce) } }
        }
        #expect(wins.count == 300)
        #expect(Set(wins).count == 300)
    }
}

/// A small deterministic generator (SplitMix64), so a failing walk can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
