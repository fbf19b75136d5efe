// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore
import SignetTestSupport
import Testing

/// Accounts, login failure windows and server secrets, unchanged against every store.
@Suite(.awaitsCleanups) struct AccountStoreConformanceTests {
    typealias Kind = StoreConformanceTests.Kind
    static let kinds = StoreConformanceTests.kinds
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func account(_ name: String, password: String = "pw", at time: Date) throws -> AccountRecord {
        // No Basic hash here (PBKDF2 is slow and tested apart); a stored string all the same.
        var account = try AccountRecord.make(
            name: name,
            password: password,
            realm: "bank",
            algorithms: [.sha256, .sha512_256, .md5],
            basicIterations: nil,
            now: time
        )
        account.basicHash = "$pbkdf2-sha256$i=600000$c2FsdA$" + password
        return account
    }

    static func device(_ id: String, user: String?) throws -> DeviceRecord {
        var device = try StoreConformanceTests.device(id)
        device.user = user
        return device
    }

    /// Pages by name in byte order (uppercase before lowercase, ASCII before the rest, whatever a
    /// database's collation says), each starting after the last name of the one before.
    @Test(arguments: kinds)
    func accountsArePagedByNameInByteOrder(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        #expect(try await store.listAccounts(after: nil, limit: 10) == [])
        let names = ["zoë", "Zed", "alice", "Alice", "bob", "Ärger", "a b", "Ω", "alice2"]
        for name in names { _ = try await store.putAccount(try Self.account(name, at: t0)) }
        let byteOrder = names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(byteOrder == ["Alice", "Zed", "a b", "alice", "alice2", "bob", "zoë", "Ärger", "Ω"])
        var seen: [String] = []
        var after: String?
        while true {
            let page = try await store.listAccounts(after: after, limit: 4)
            seen += page.map(\.name)
            guard page.count == 4 else { break }
            after = page.last?.name
        }
        #expect(seen == byteOrder)
        #expect(try await store.listAccounts(after: "alice", limit: 2).map(\.name) == ["alice2", "bob"])
        #expect(try await store.listAccounts(after: nil, limit: 1) == [try #require(try await store.account(name: "Alice"))])
        #expect(try await store.deleteAccount(name: "bob", at: t0))
        #expect(try await store.listAccounts(after: "alice2", limit: 5).map(\.name) == ["zoë", "Ärger", "Ω"])
    }

    @Test(arguments: kinds)
    func anAccountIsCreatedReplacedAndFoundByNameOrUserhash(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let first = try Self.account("Jäsøn Doe", at: t0)
        #expect(try await store.putAccount(first))
        #expect(try await store.account(name: "Jäsøn Doe") == first)
        for algorithm in DigestAlgorithm.allCases {
            let userhash = DigestResponse.userhash(username: "Jäsøn Doe", realm: "bank", algorithm: algorithm)
            #expect(try await store.account(userhash: userhash, algorithm: algorithm)?.name == "Jäsøn Doe", "\(algorithm)")
        }
        // A userhash of one algorithm is not looked up under another.
        let sha256 = DigestResponse.userhash(username: "Jäsøn Doe", realm: "bank", algorithm: .sha256)
        #expect(try await store.account(userhash: sha256, algorithm: .sha512_256) == nil)

        var changed = try Self.account("Jäsøn Doe", password: "new", at: t0.addingTimeInterval(60))
        changed.digests[.md5] = nil
        #expect(try await store.putAccount(changed) == false)
        let stored = try #require(try await store.account(name: "Jäsøn Doe"))
        #expect(stored.createdAt == t0 && stored.updatedAt == t0.addingTimeInterval(60))
        #expect(stored.digests == changed.digests && stored.basicHash == changed.basicHash)
        #expect(try await store.account(userhash: first.digests[.md5]!.userhash, algorithm: .md5) == nil)
        #expect(try await store.account(name: "jäsøn doe") == nil)
        #expect(try await store.account(name: "nobody") == nil)
    }

    @Test(arguments: kinds)
    func deletingAUserRevokesItsDevicesAndOnlyThose(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        _ = try await store.putAccount(try Self.account("alice", at: t0))
        _ = try await store.putAccount(try Self.account("bob", at: t0))
        try await store.registerDevice(try Self.device("a1", user: "alice"))
        try await store.registerDevice(try Self.device("a2", user: "alice"))
        try await store.registerDevice(try Self.device("b1", user: "bob"))
        try await store.registerDevice(try Self.device("n1", user: nil))
        #expect(try await store.device(id: "a1")?.user == "alice")
        #expect(try await store.device(keyID: "key-n1")?.user == nil)

        #expect(try await store.deleteAccount(name: "alice", at: t0.addingTimeInterval(5)))
        #expect(try await store.account(name: "alice") == nil)
        for id in ["a1", "a2"] {
            let device = try #require(try await store.device(id: id))
            #expect(device.status == .revoked && device.revokedAt == t0.addingTimeInterval(5), "\(id)")
        }
        #expect(try await store.device(id: "b1")?.status == .active)
        #expect(try await store.device(id: "n1")?.status == .active)
        #expect(try await store.deleteAccount(name: "alice", at: t0) == false)
        // A device cannot be registered for a user who is gone (or never was).
        await StoreConformanceTests.expectCode(.credentialsInvalid) {
            try await store.registerDevice(try Self.device("a3", user: "alice"))
        }
        #expect(try await store.device(id: "a3") == nil)
    }

    @Test(arguments: kinds)
    func registrationsRacingADeleteLeaveNoActiveDeviceOfTheDeletedUser(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        _ = try await store.putAccount(try Self.account("carol", at: t0))
        let devices = try (0..<24).map { try Self.device("c\($0)", user: "carol") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices {
                group.addTask { try? await store.registerDevice(device) }
            }
            group.addTask { _ = try await store.deleteAccount(name: "carol", at: self.t0) }
            try await group.waitForAll()
        }
        for device in devices {
            if let stored = try await store.device(id: device.deviceID) {
                #expect(stored.status == .revoked, "\(device.deviceID) outlived its user")
            }
        }
    }

    @Test(arguments: kinds)
    func loginFailuresCountWithinAWindowThatRestartsWhenClosed(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        for expected in 1...3 {
            let failures = try await store.recordLoginFailure(subject: "user:a", window: 60, now: t0.addingTimeInterval(Double(expected)))
            #expect(failures == LoginFailures(count: expected, windowEnd: t0.addingTimeInterval(61)))
        }
        _ = try await store.recordLoginFailure(subject: "source:1.2.3.4", window: 60, now: t0)
        let open = try await store.loginFailures(subjects: ["user:a", "source:1.2.3.4", "user:b"], now: t0.addingTimeInterval(30))
        #expect(open["user:a"]?.count == 3 && open["source:1.2.3.4"]?.count == 1 && open["user:b"] == nil)
        // Closed windows are not reported, and the next failure opens a new one.
        #expect(try await store.loginFailures(subjects: ["user:a"], now: t0.addingTimeInterval(61)).isEmpty)
        let restarted = try await store.recordLoginFailure(subject: "user:a", window: 60, now: t0.addingTimeInterval(70))
        #expect(restarted == LoginFailures(count: 1, windowEnd: t0.addingTimeInterval(130)))
        try await store.clearLoginFailures(subject: "user:a")
        #expect(try await store.loginFailures(subjects: ["user:a"], now: t0.addingTimeInterval(71)).isEmpty)
        // The sweep removes closed windows only.
        #expect(try await store.sweep(now: t0.addingTimeInterval(61)) >= 1)
        #expect(try await store.loginFailures(subjects: ["source:1.2.3.4"], now: t0).isEmpty)
    }

    @Test(arguments: kinds)
    func concurrentFailuresAreEachCountedOnce(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask { try await store.recordLoginFailure(subject: "user:x", window: 60, now: self.t0).count }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts.sorted() == Array(1...40))
    }

    @Test(arguments: kinds)
    func theFirstProposedServerSecretWinsForEveryone(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let values = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for index in 0..<16 {
                group.addTask { try await store.serverSecret(named: "k", proposing: [UInt8](repeating: UInt8(index), count: 32)) }
            }
            return try await group.reduce(into: Set<[UInt8]>()) { $0.insert($1) }
        }
        #expect(values.count == 1)
        #expect(try await store.serverSecret(named: "k", proposing: [9]) == values.first)
        #expect(try await store.serverSecret(named: "other", proposing: [7, 7]) == [7, 7])
    }
}
