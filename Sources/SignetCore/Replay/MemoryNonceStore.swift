// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A bounded, expiring in-memory ``NonceStore`` for one process.
///
/// Claims are swept in arrival order, a little at a time on each call, so no request waits for a
/// full scan. When full of unexpired claims it refuses new ones (`nonce_store_full`) rather than
/// forgetting a claim early, which would reopen a replay window.
public final class MemoryNonceStore: NonceStore {
    /// A pair, not a joined string: ("a", "bc") and ("ab", "c") stay apart without building a key.
    private struct Claim: Hashable {
        var keyID: String
        var nonce: String
    }

    private let state: Locked<ExpiringClaims<Claim, Date>>
    public let capacity: Int

    public init(capacity: Int = 1_000_000) {
        self.capacity = capacity
        // Room for the first few thousand claims up front: growing the table while requests wait
        // rehashes every claim held, and a busy store passes this size in its first second.
        state = Locked(ExpiringClaims(reserving: min(capacity, 4096)))
    }

    public func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool {
        try claimNow(keyID: keyID, nonce: nonce, until: expiry, now: now)
    }

    /// The synchronous form of ``claim(keyID:nonce:until:now:)``.
    public func claimNow(keyID: String, nonce: String, until expiry: Date, now: Date) throws -> Bool {
        let key = Claim(keyID: keyID, nonce: nonce)
        return try state.withLock { state in
            if state.count >= capacity { state.sweep(now: now, limit: Int.max) }
            if state.isClaimed(key, at: now) { return false }
            guard state.count < capacity || state.holds(key) else {
                throw SignetError(.nonceStoreFull, "the nonce store holds \(capacity) unexpired claims")
            }
            state.insert(key, until: expiry, now: now)
            return true
        }
    }

    /// Removes every expired claim now; returns how many went.
    @discardableResult
    public func sweep(now: Date) -> Int {
        state.withLock { $0.sweepAll(now: now) }
    }

    /// How many claims are held (expired ones included until swept).
    public var count: Int { state.withLock { $0.count } }
}
