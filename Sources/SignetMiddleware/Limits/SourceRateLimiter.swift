// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Synchronization

/// A per-source counter for unauthenticated endpoints: at most `limit` requests in the window that a
/// source's first request opens (not a window aligned to the clock, which a burst straddling the
/// boundary gets through twice).
///
/// A source is an IPv4 address or an IPv6 /64 (``IPAddress/sourceKey``), so a client holding a
/// whole IPv6 prefix is one source. Bounded in memory: at most `maximumSources` sources are tracked;
/// past it the source tracked longest is forgotten. Forgetting only gives that source a fresh
/// count; a shared bucket for newcomers would instead let anyone with enough addresses (two /48s of
/// IPv6 hold more /64s than the cap) lock every new client out.
public final class SourceRateLimiter: Sendable {
    private struct Entry {
        var start: Date
        var count: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Keys in the order they were first tracked (stale ones are skipped when evicting).
        var order: [String] = []
        var head = 0

        mutating func evictOldest() {
            while head < order.count {
                let key = order[head]
                head += 1
                if entries.removeValue(forKey: key) != nil { break }
            }
            // Keep the queue's dead front from growing without bound.
            if head > 1024, head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
        }
    }

    private let state = Mutex(State())
    public let limit: Int
    public let window: TimeInterval
    public let maximumSources: Int

    public init(limit: Int, windowSeconds: Int64 = 60, maximumSources: Int = 100_000) {
        self.limit = limit
        self.window = TimeInterval(windowSeconds)
        self.maximumSources = maximumSources
    }

    /// Whether `source` is over the limit now, without counting a request.
    public func isExceeded(_ source: String?, now: Date) -> Bool {
        state.withLock { isExceeded(IPAddress.sourceKey(source), in: $0, now: now) }
    }

    /// Counts one request from `source`; over the limit, `rate_limited` with `Retry-After` (the
    /// seconds until the source's window ends, when a request is certain to be counted afresh).
    public func admit(_ source: String?, now: Date, refusing reason: String) throws {
        guard allow(source, now: now) else { throw refusal(source, now: now, reason) }
    }

    /// `rate_limited` for `source` with the seconds until its window ends as `Retry-After`.
    public func refusal(_ source: String?, now: Date, _ reason: String) -> SignetError {
        var error = SignetError(.rateLimited, reason)
        error.retryAfterSeconds = windowEnd(source, now: now).map { max(1, Int($0.timeIntervalSince(now).rounded(.up))) } ?? 1
        return error
    }

    /// When `source`'s open window ends; `nil` when it has none.
    public func windowEnd(_ source: String?, now: Date) -> Date? {
        state.withLock { state in
            guard let entry = state.entries[IPAddress.sourceKey(source)], now.timeIntervalSince(entry.start) < window else {
                return nil
            }
            return entry.start.addingTimeInterval(window)
        }
    }

    /// Runs `check` unless `source` is over the limit, and counts one against it when `check`
    /// returns `false`: a limit of failures. One critical section, so parallel attempts cannot all
    /// pass before any failure is counted. `nil` when over the limit (`check` did not run).
    public func attempt(_ source: String?, now: Date, check: () -> Bool) -> Bool? {
        let key = IPAddress.sourceKey(source)
        return state.withLock { state in
            guard !isExceeded(key, in: state, now: now) else { return nil }
            let passed = check()
            if !passed { _ = count(key, in: &state, now: now) }
            return passed
        }
    }

    /// Counts one request from `source`; `false` when it is over the limit.
    public func allow(_ source: String?, now: Date) -> Bool {
        let key = IPAddress.sourceKey(source)
        return state.withLock { count(key, in: &$0, now: now) <= limit }
    }

    private func isExceeded(_ key: String, in state: State, now: Date) -> Bool {
        guard let entry = state.entries[key] else { return false }
        return now.timeIntervalSince(entry.start) < window && entry.count >= limit
    }

    /// Counts one against `key`; returns its count in the window.
    private func count(_ key: String, in state: inout State, now: Date) -> Int {
        if state.entries[key] == nil {
            if state.entries.count >= maximumSources { state.evictOldest() }
            state.order.append(key)
        }
        var entry = state.entries[key] ?? Entry(start: now, count: 0)
        if now.timeIntervalSince(entry.start) >= window { entry = Entry(start: now, count: 0) }
        entry.count += 1
        state.entries[key] = entry
        return entry.count
    }
}
