// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A bounded, expiring in-memory ``NonceStore`` for one process.
///
/// Claims are swept earliest expiry first, a little at a time on each claim, so no request waits for
/// a full scan, and each is kept ``NonceRetention/afterExpiry`` past its expiry. When full of claims
/// it may not forget yet it refuses new ones (`nonce_store_full`) rather than forgetting a claim
/// early, which would reopen a replay window.
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

    nonisolated(nonsending) public func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool {
        try claimNow(keyID: keyID, nonce: nonce, until: expiry, now: now)
    }

    /// The synchronous form of ``claim(keyID:nonce:until:now:)``.
    public func claimNow(keyID: String, nonce: String, until expiry: Date, now: Date) throws -> Bool {
        let key = Claim(keyID: keyID, nonce: nonce)
        return try state.withLock { state in
            let cutoff = now.addingTimeInterval(-NonceRetention.afterExpiry)
            if state.count >= capacity { state.sweepAll(before: cutoff) }
            if state.isClaimed(key, at: now) { return false }
            guard state.count < capacity || state.holds(key) else {
                throw SignetError(.nonceStoreFull, "the nonce store holds \(capacity) claims it may not forget yet")
            }
            state.insert(key, until: expiry, forgettingBefore: cutoff)
            return true
        }
    }

    /// Removes every claim that lapsed more than ``NonceRetention/afterExpiry`` before `now`;
    /// returns how many went.
    @discardableResult
    public func sweep(now: Date) -> Int {
        state.withLock { $0.sweepAll(before: now.addingTimeInterval(-NonceRetention.afterExpiry)) }
    }

    /// How many claims are held (expired ones included until swept).
    public var count: Int { state.withLock { $0.count } }
}
