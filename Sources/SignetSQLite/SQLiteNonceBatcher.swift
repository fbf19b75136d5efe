// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import NIOPosix
import SignetCore
import SignetStore
import Synchronization

/// Group commit for nonce claims on SQLite.
///
/// SQLite has one writer. Claims that arrive while a write is under way wait and then go together, as
/// one transaction that decides each against the claims in memory and appends the won ones to the
/// log (``SQLiteClaimConnection``): one commit, atomic per pair. A pair twice in one batch is won by
/// the first claimant only. At low load a batch is a single claim, so nothing waits for a timer.
final class SQLiteNonceBatcher: Sendable {
    private struct Claim {
        var claim: SQLiteClaimConnection.Claim
        var continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State {
        var pending: [Claim] = []
        var flushing = false
    }

    /// Claims per transaction: enough to absorb a burst, few enough that none waits long.
    static let maximumBatch = 256

    private let connection: SQLiteClaimConnection
    private let state = Mutex(State())

    init(connection: SQLiteClaimConnection) {
        self.connection = connection
    }

    /// Prepares the claims' statements, once the schema is in place.
    @discardableResult
    func prepare() async throws -> Int {
        try await connection.prepare()
    }

    /// Reads in log rows written by another connection (see ``SQLiteClaimConnection/readIn()``).
    func readIn() async throws {
        try await connection.readIn()
    }

    /// Closes the claims' connection.
    func close() async throws {
        try await connection.close()
    }

    nonisolated(nonsending) func claim(keyID: String, nonce: String, expiry: Int, now: Int) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { state -> Bool in
                state.pending.append(
                    Claim(
                        claim: .init(keyID: keyID, nonce: nonce, expiry: expiry, now: now),
                        continuation: continuation
                    )
                )
                guard !state.flushing else { return false }
                state.flushing = true
                return true
            }
            guard start else { return }
            // On an event loop (the gateway's data plane verifies there), the batch leaves once
            // the loop has run what is ready now: every request of this turn claims in one
            // transaction, not each in its own.
            if let loop = MultiThreadedEventLoopGroup.currentEventLoop {
                loop.execute { self.connection.onThreadPool { self.writeNextBatch(active: $0) } }
            } else {
                connection.onThreadPool { self.writeNextBatch(active: $0) }
            }
        }
    }

    /// Writes one batch on the thread pool, then, while claims are pending, leaves the pool's
    /// thread to other work and comes back for the next. No task hop on the way: the claimants' tasks
    /// are resumed from here (on the data plane, straight onto their event loops); a batch by way
    /// of Swift's global executor cost each claim two more thread switches.
    private func writeNextBatch(active: Bool) {
        let batch = state.withLock { state -> [Claim] in
            let batch = Array(state.pending.prefix(Self.maximumBatch))
            state.pending.removeFirst(batch.count)
            if batch.isEmpty { state.flushing = false }
            return batch
        }
        if batch.isEmpty { return }
        do {
            guard active else { throw SignetError(.storeUnavailable, "SQLite: the thread pool has shut down") }
            let won = try connection.writeNow(batch.map(\.claim))
            for (claim, won) in zip(batch, won) { claim.continuation.resume(returning: won) }
        } catch {
            let failure = error as? SignetError ?? SignetError(.storeUnavailable, "SQLite: \(error)")
            for claim in batch { claim.continuation.resume(throwing: failure) }
        }
        let more = state.withLock { state in
            if state.pending.isEmpty { state.flushing = false }
            return state.flushing
        }
        if more { connection.onThreadPool { self.writeNextBatch(active: $0) } }
    }
}
