// SPDX-License-Identifier: Apache-2.0
import Foundation
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
        // The store's own connection sweeps what the claims' connection wrote: the five that lapsed.
        #expect(try await store.claim(keyID: "k", nonce: "late", until: t0.addingTimeInterval(100), now: t0))
        #expect(try await store.sweep(now: t0.addingTimeInterval(11)) == 5)
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
}
