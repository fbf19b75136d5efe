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

    private struct State {
        var expiries: [Claim: Date] = [:]
        /// Claims in arrival order; expiries are nearly ordered, which is all sweeping needs.
        var queue: [(key: Claim, expiry: Date)] = []
        var head = 0

        mutating func sweep(now: Date, limit: Int) {
            var swept = 0
            while head < queue.count, queue[head].expiry < now, swept < limit {
                let entry = queue[head]
                if let current = expiries[entry.key], current == entry.expiry { expiries[entry.key] = nil }
                head += 1
                swept += 1
            }
            if head > 1024, head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
        }
    }

    private let state = Locked(State())
    public let capacity: Int

    public init(capacity: Int = 1_000_000) {
        self.capacity = capacity
        // Room for the first few thousand claims up front: growing the table while requests wait
        // rehashes every claim held, and a busy store passes this size in its first second.
        state.withLock {
            $0.expiries.reserveCapacity(min(capacity, 4096))
            $0.queue.reserveCapacity(min(capacity, 4096))
        }
    }

    public func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool {
        try claimNow(keyID: keyID, nonce: nonce, until: expiry, now: now)
    }

    /// The synchronous form of ``claim(keyID:nonce:until:now:)``.
    public func claimNow(keyID: String, nonce: String, until expiry: Date, now: Date) throws -> Bool {
        let key = Claim(keyID: keyID, nonce: nonce)
        return try state.withLock { state in
            state.sweep(now: now, limit: state.expiries.count >= capacity ? Int.max : 64)
            if let existing = state.expiries[key], existing >= now { return false }
            guard state.expiries.count < capacity || state.expiries[key] != nil else {
                throw SignetError(.nonceStoreFull, "the nonce store holds \(capacity) unexpired claims")
            }
            state.expiries[key] = expiry
            state.queue.append((key, expiry))
            return true
        }
    }

    /// Removes every expired claim now; returns how many went.
    @discardableResult
    public func sweep(now: Date) -> Int {
        state.withLock { state in
            let before = state.expiries.count
            state.expiries = state.expiries.filter { $0.value >= now }
            state.queue = state.queue.filter { state.expiries[$0.key] == $0.expiry }
            state.head = 0
            return before - state.expiries.count
        }
    }

    /// How many claims are held (expired ones included until swept).
    public var count: Int { state.withLock { $0.expiries.count } }
}
