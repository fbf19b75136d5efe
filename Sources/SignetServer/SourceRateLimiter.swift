// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// A per-source fixed-window counter for unauthenticated endpoints, bounded in memory: at most
/// `maximumSources` sources are tracked per window, and sources past that share one bucket.
final class SourceRateLimiter: Sendable {
    private struct State {
        var window: Int64 = 0
        var counts: [String: Int] = [:]
    }

    private let state = Mutex(State())
    let limit: Int
    let windowSeconds: Int64
    let maximumSources: Int

    init(limit: Int, windowSeconds: Int64 = 60, maximumSources: Int = 100_000) {
        self.limit = limit
        self.windowSeconds = windowSeconds
        self.maximumSources = maximumSources
    }

    /// Counts one request from `source`; `false` when it is over the limit.
    func allow(_ source: String?, now: Date) -> Bool {
        let window = Int64(now.timeIntervalSince1970) / windowSeconds
        return state.withLock { state in
            if state.window != window {
                state.window = window
                state.counts.removeAll(keepingCapacity: true)
            }
            var key = source ?? "unknown"
            if state.counts[key] == nil, state.counts.count >= maximumSources { key = "overflow" }
            let count = state.counts[key, default: 0] + 1
            state.counts[key] = count
            return count <= limit
        }
    }
}
