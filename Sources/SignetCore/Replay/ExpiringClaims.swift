// SPDX-License-Identifier: Apache-2.0

/// Claims held in memory until they lapse: which keys are claimed, each until when.
///
/// The answer comes from each key's own expiry, so it is exact whatever the order of sweeping.
/// Claims are swept in arrival order, a little at a time on each insert, so no caller waits for a
/// full scan: expiries are nearly ordered (now plus one of a few lifetimes), so what lingers behind
/// a later expiry is little and short-lived. Used by ``MemoryNonceStore`` (keyed by the pair) and by
/// SQLite's claims (keyed by a digest of the pair, the file holding the pairs themselves).
public struct ExpiringClaims<Key: Hashable, Instant: Comparable> {
    private var expiries: [Key: Instant] = [:]
    /// Claims in arrival order, from `head` on.
    private var queue: [(key: Key, expiry: Instant)] = []
    private var head = 0

    public init(reserving capacity: Int = 0) {
        expiries.reserveCapacity(capacity)
        queue.reserveCapacity(capacity)
    }

    /// How many claims are held (lapsed ones included until swept).
    public var count: Int { expiries.count }

    /// Whether `key` is claimed at `now`: held with an expiry not before `now`.
    public func isClaimed(_ key: Key, at now: Instant) -> Bool {
        guard let expiry = expiries[key] else { return false }
        return expiry >= now
    }

    /// Whether `key` is held at all, lapsed or not.
    public func holds(_ key: Key) -> Bool { expiries[key] != nil }

    /// Records `key` as claimed until `expiry` (the later one, if it was held already), after sweeping
    /// at most `sweeping` lapsed claims.
    public mutating func insert(_ key: Key, until expiry: Instant, now: Instant, sweeping: Int = 64) {
        sweep(now: now, limit: sweeping)
        if let held = expiries[key], held >= expiry { return }
        expiries[key] = expiry
        queue.append((key, expiry))
    }

    /// Looks at up to `limit` arrivals that lapsed before `now`, oldest first, and forgets those
    /// still current; returns how many went.
    @discardableResult
    public mutating func sweep(now: Instant, limit: Int) -> Int {
        var looked = 0
        var swept = 0
        while head < queue.count, queue[head].expiry < now, looked < limit {
            let entry = queue[head]
            // A key claimed again since has a later entry of its own: only its newest expiry removes it.
            if let current = expiries[entry.key], current == entry.expiry {
                expiries[entry.key] = nil
                swept += 1
            }
            head += 1
            looked += 1
        }
        if head > 1024, head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return swept
    }

    /// Forgets every claim that lapsed before `now`, in one pass; returns how many went.
    @discardableResult
    public mutating func sweepAll(now: Instant) -> Int {
        let before = expiries.count
        expiries = expiries.filter { $0.value >= now }
        queue = queue[head...].filter { expiries[$0.key] == $0.expiry }
        head = 0
        return before - expiries.count
    }
}

extension ExpiringClaims: Sendable where Key: Sendable, Instant: Sendable {}
