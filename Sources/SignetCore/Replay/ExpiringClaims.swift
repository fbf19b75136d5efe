// SPDX-License-Identifier: Apache-2.0

/// Claims held in memory until they lapse: which keys are claimed, each until when.
///
/// The answer comes from each key's own expiry, so it is exact whatever is swept when. Claims are
/// swept earliest expiry first (a binary heap), a little at a time on each insert, so no caller
/// waits for a full scan and a long-lived claim never holds back the short-lived ones behind it
/// (signatures live minutes, a token's claim until its `exp`, a day without a window). What may be
/// forgotten is the caller's to say (``NonceRetention``). Used by ``MemoryNonceStore`` (keyed by the
/// pair) and by SQLite's claims (keyed by a digest of the pair, the file holding the pairs themselves).
/// Inlinable, so each store's module specializes it for its key: unspecialized, every lookup went
/// through the generic witnesses and each entry's tuple metadata was looked up at run time.
public struct ExpiringClaims<Key: Hashable, Instant: Comparable> {
    @usableFromInline
    struct Entry {
        @usableFromInline var key: Key
        @usableFromInline var expiry: Instant

        @inlinable
        init(key: Key, expiry: Instant) {
            self.key = key
            self.expiry = expiry
        }
    }

    @usableFromInline var expiries: [Key: Instant] = [:]
    /// Every expiry recorded, a min-heap by expiry; an entry whose key has a later one since is stale.
    @usableFromInline var heap: [Entry] = []

    @inlinable
    public init(reserving capacity: Int = 0) {
        expiries.reserveCapacity(capacity)
        heap.reserveCapacity(capacity)
    }

    /// How many claims are held (lapsed ones included until swept).
    @inlinable
    public var count: Int { expiries.count }

    /// Whether `key` is claimed at `now`: held with an expiry not before `now`.
    @inlinable
    public func isClaimed(_ key: Key, at now: Instant) -> Bool {
        guard let expiry = expiries[key] else { return false }
        return expiry >= now
    }

    /// Whether `key` is held at all, lapsed or not.
    @inlinable
    public func holds(_ key: Key) -> Bool { expiries[key] != nil }

    /// Records `key` as claimed until `expiry` (the later one, if it was held already), after
    /// sweeping (``sweep(before:limit:)``) with `sweeping` as the limit.
    @inlinable
    public mutating func insert(_ key: Key, until expiry: Instant, forgettingBefore cutoff: Instant, sweeping: Int = 64) {
        sweep(before: cutoff, limit: sweeping)
        if let held = expiries[key], held >= expiry { return }
        expiries[key] = expiry
        push(Entry(key: key, expiry: expiry))
    }

    /// Looks at up to `limit` recorded expiries before `cutoff`, earliest first, and forgets the
    /// claims whose current expiry they are (a key claimed again since keeps its later one);
    /// returns how many went.
    @inlinable @discardableResult
    public mutating func sweep(before cutoff: Instant, limit: Int) -> Int {
        var looked = 0
        var swept = 0
        while let first = heap.first, first.expiry < cutoff, looked < limit {
            popFirst()
            // A key claimed again since has a later entry of its own: only its newest expiry removes it.
            if let current = expiries[first.key], current == first.expiry {
                expiries[first.key] = nil
                swept += 1
            }
            looked += 1
        }
        return swept
    }

    /// Forgets every claim that lapsed before `cutoff`; returns how many went.
    @inlinable @discardableResult
    public mutating func sweepAll(before cutoff: Instant) -> Int {
        sweep(before: cutoff, limit: .max)
    }

    @inlinable
    mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].expiry < heap[parent].expiry else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    @inlinable
    mutating func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            var smallest = parent
            let left = 2 * parent + 1
            let right = left + 1
            if left < heap.count, heap[left].expiry < heap[smallest].expiry { smallest = left }
            if right < heap.count, heap[right].expiry < heap[smallest].expiry { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

extension ExpiringClaims: Sendable where Key: Sendable, Instant: Sendable {}
extension ExpiringClaims.Entry: Sendable where Key: Sendable, Instant: Sendable {}
