// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// A per-source counter for unauthenticated endpoints: at most `limit` requests in the window that a
/// source's first request opens (not a window aligned to the clock, which a burst straddling the
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
            guard let entry = state.entries[source ?? "unknown"] ?? state.entries["overflow"] else { return false }
            return now.timeIntervalSince(entry.start) < window && entry.count >= limit
        }
    }

    /// Counts one request from `source`; `false` when it is over the limit.
    public func allow(_ source: String?, now: Date) -> Bool {
        state.withLock { state in
            var key = source ?? "unknown"
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
            return entry.count <= limit
        }
    }
}
