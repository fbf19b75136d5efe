// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// Calls back the operations still waiting at their deadline: one task ticking while any is
/// watched, rather than a timer per operation (a store operation is on every verified request).
///
/// A deadline is met to within ``tick``.
final class StoreWatchdog: Sendable {
    private struct Watched {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        var next: UInt64 = 0
        var watched: [UInt64: Watched] = [:]
        var ticking = false
    }

    static let tick: Duration = .milliseconds(10)
    private let state = Mutex(State())

    init() {}

    /// Calls `expire` at `deadline` unless ``release(_:)`` comes first; returns what to release.
    func watch(until deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, start) = state.withLock { state -> (UInt64, Bool) in
            state.next += 1
            state.watched[state.next] = Watched(deadline: deadline, expire: expire)
            defer { state.ticking = true }
            return (state.next, !state.ticking)
        }
        if start { Task { await self.run() } }
        return id
    }

    func release(_ id: UInt64) {
        _ = state.withLock { $0.watched.removeValue(forKey: id) }
    }

    /// Ticks until nothing is watched.
    private func run() async {
        while true {
            try? await Task.sleep(for: Self.tick)
            let now = ContinuousClock.now
            let due = state.withLock { state -> [Watched]? in
                if state.watched.isEmpty {
                    state.ticking = false
                    return nil
                }
                let due = state.watched.filter { $0.value.deadline <= now }
                for id in due.keys { state.watched.removeValue(forKey: id) }
                return Array(due.values)
            }
            guard let due else { return }
            for watched in due { watched.expire() }
        }
    }
}
