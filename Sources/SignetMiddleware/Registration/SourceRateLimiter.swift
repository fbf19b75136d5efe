// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Synchronization

/// A per-source counter for unauthenticated endpoints: at most `limit` requests in the window that a
/// source's first request opens. A source is an IPv4 address or an IPv6 /64 (``IPAddress/sourceKey``),
/// so a client holding a whole IPv6 prefix is one source (not a window aligned to the clock, which a burst straddling the
/// boundary gets through twice). Bounded in memory: at most `maximumSources` sources are tracked;
/// expired ones are swept at most once per window, and new sources past the cap share one bucket.
public final class SourceRateLimiter: Sendable {
    private struct Entry {
        var start: Date
        var count: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var lastSweep = Date.distantPast
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
        state.withLock { state in
            guard let entry = Self.entry(of: source, in: state) else { return false }
            return now.timeIntervalSince(entry.start) < window && entry.count >= limit
        }
    }

    /// Counts one request from `source`; over the limit, `rate_limited` with `Retry-After` (the
    /// seconds until the source's window ends, when a request is certain to be counted afresh).
    public func admit(_ source: String?, now: Date, refusing reason: String) throws {
        guard allow(source, now: now) else { throw refusal(source, now: now, reason) }
    }

    /// `rate_limited` for `source` with the seconds until its window ends as `Retry-After`.
    public func refusal(_ source: String?, now: Date, _ reason: String) -> SignetError {
        var error = SignetError(.rateLimited, reason)
        error.retryAfterSeconds = state.withLock { state in
            guard let entry = Self.entry(of: source, in: state) else { return 1 }
            return max(1, Int((window - now.timeIntervalSince(entry.start)).rounded(.up)))
        }
        return error
    }

    /// The source's own counter, or the shared one it was put in past `maximumSources`.
    private static func entry(of source: String?, in state: State) -> Entry? {
        state.entries[IPAddress.sourceKey(source)] ?? state.entries["overflow"]
    }

    /// Runs `check` unless `source` is over the limit, and counts one against it when `check`
    /// returns `false`: a limit of failures. One critical section, so parallel attempts cannot all
    /// pass before any failure is counted. `nil` when over the limit (`check` did not run).
    public func attempt(_ source: String?, now: Date, check: () -> Bool) -> Bool? {
        state.withLock { state in
            if let entry = Self.entry(of: source, in: state), now.timeIntervalSince(entry.start) < window,
                entry.count >= limit
            {
                return nil
            }
            let passed = check()
            if !passed { _ = Self.count(source, in: &state, now: now, window: window, maximumSources: maximumSources) }
            return passed
        }
    }

    /// Counts one request from `source`; `false` when it is over the limit.
    public func allow(_ source: String?, now: Date) -> Bool {
        state.withLock { state in
            Self.count(source, in: &state, now: now, window: window, maximumSources: maximumSources) <= limit
        }
    }

    /// Counts one against `source` (or the shared overflow counter); returns its count in the window.
    private static func count(_ source: String?, in state: inout State, now: Date, window: TimeInterval, maximumSources: Int)
        -> Int
    {
        var key = IPAddress.sourceKey(source)
        if state.entries[key] == nil, state.entries.count >= maximumSources {
            if now.timeIntervalSince(state.lastSweep) >= window {
                state.entries = state.entries.filter { now.timeIntervalSince($0.value.start) < window }
                state.lastSweep = now
            }
            if state.entries.count >= maximumSources { key = "overflow" }
        }
        var entry = state.entries[key] ?? Entry(start: now, count: 0)
        if now.timeIntervalSince(entry.start) >= window { entry = Entry(start: now, count: 0) }
        entry.count += 1
        state.entries[key] = entry
        return entry.count
    }
}
