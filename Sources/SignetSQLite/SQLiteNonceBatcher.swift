// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore
import Synchronization

/// Group commit for nonce claims on SQLite.
///
/// SQLite has one writer. Claims that arrive while a write is under way wait and then go together, as
/// one transaction of prepared `INSERT … ON CONFLICT … DO UPDATE … WHERE expired … RETURNING` steps
/// (``SQLiteClaimConnection``): one commit, still atomic per pair. A pair twice in one batch is won by
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
    func prepare() async throws {
        try await connection.prepare()
    }

    /// Closes the claims' connection.
    func close() async throws {
        try await connection.close()
    }

    func claim(keyID: String, nonce: String, expiry: Int, now: Int) async throws -> Bool {
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
            if start { Task { await self.drain() } }
        }
    }

    /// Writes batches until nothing is pending.
    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Claim] in
                let batch = Array(state.pending.prefix(Self.maximumBatch))
                state.pending.removeFirst(batch.count)
                if batch.isEmpty { state.flushing = false }
                return batch
            }
            if batch.isEmpty { return }
            await write(batch)
        }
    }

    private func write(_ batch: [Claim]) async {
        do {
            let won = try await connection.write(batch.map(\.claim))
            for (claim, won) in zip(batch, won) { claim.continuation.resume(returning: won) }
        } catch {
            let failure = error as? SignetError ?? SignetError(.storeUnavailable, "SQLite: \(error)")
            for claim in batch { claim.continuation.resume(throwing: failure) }
        }
    }
}
