// SPDX-License-Identifier: Apache-2.0
import Foundation
import SQLiteNIO
import SignetCore
import SignetStore
import Synchronization

/// Group commit for nonce claims on SQLite.
///
/// SQLite has one writer. Claims that arrive while a write is under way wait and then go together, as
/// one multi-row `INSERT … ON CONFLICT … DO UPDATE … WHERE expired … RETURNING`: one statement, one
/// commit, still atomic per pair. A pair twice in one batch is won by the first claimant only. At low
/// load a batch is a single claim, so nothing waits for a timer.
final class SQLiteNonceBatcher: Sendable {
    private struct Claim {
        var keyID: String
        var nonce: String
        var expiry: Int
        var now: Int
        var continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State {
        var pending: [Claim] = []
        var flushing = false
    }

    /// SQLite's default limit on bound parameters is 32,766; four per claim stays far below.
    static let maximumBatch = 256

    private let connection: SQLiteConnection
    private let state = Mutex(State())

    init(connection: SQLiteConnection) {
        self.connection = connection
    }

    func claim(keyID: String, nonce: String, expiry: Int, now: Int) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { state -> Bool in
                state.pending.append(
                    Claim(keyID: keyID, nonce: nonce, expiry: expiry, now: now, continuation: continuation)
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
        // One cutoff for the batch: the latest verifier time among its claims is the safe choice
        // only if it does not take over a pair another claim still holds; the earliest is always safe.
        let cutoff = batch.map(\.now).min() ?? 0
        var sql = "INSERT INTO nonces (key_id, nonce, expires_at) VALUES "
        var binds: [SQLiteData] = []
        binds.reserveCapacity(batch.count * 3 + 1)
        for (index, claim) in batch.enumerated() {
            sql += index == 0 ? "(?, ?, ?)" : ", (?, ?, ?)"
            binds += [.text(claim.keyID), .text(claim.nonce), .integer(claim.expiry)]
        }
        sql += """
             ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = excluded.expires_at
            WHERE nonces.expires_at < ? RETURNING key_id, nonce
            """
        binds.append(.integer(cutoff))
        do {
            let rows = try await connection.query(sql, binds)
            var won = Set<Pair>()
            for row in rows {
                if let keyID = row.column("key_id")?.string, let nonce = row.column("nonce")?.string {
                    won.insert(Pair(keyID: keyID, nonce: nonce))
                }
            }
            for claim in batch {
                // remove(...) hands each won pair to its first claimant only.
                claim.continuation.resume(returning: won.remove(Pair(keyID: claim.keyID, nonce: claim.nonce)) != nil)
            }
        } catch {
            let failure = SignetError(.storeUnavailable, "SQLite: \(error)")
            for claim in batch { claim.continuation.resume(throwing: failure) }
        }
    }

    private struct Pair: Hashable {
        var keyID: String
        var nonce: String
    }
}
