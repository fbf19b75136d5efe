// SPDX-License-Identifier: Apache-2.0
import SignetServer
import SignetStore
import Synchronization

/// A store seam for outage tests: while stalled, every operation waits — as on a PostgreSQL server
/// that went away — until ``release()``, then runs on the store underneath.
package final class StallingInterceptor: StoreInterceptor {
    private struct State {
        var stalled = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var operations: [String] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// The operations asked of the store, stalled or not, in order.
    package var operations: [String] { state.withLock { $0.operations } }

    /// From now on, operations wait.
    package func stall() {
        state.withLock { $0.stalled = true }
    }

    /// Lets every waiting operation run, and those after it.
    package func release() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.stalled = false
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    nonisolated(nonsending) package func run<T: Sendable>(_ name: String, probe: Bool, _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T) async throws -> T {
        await withCheckedContinuation { continuation in
            let stalled = state.withLock { state -> Bool in
                state.operations.append(name)
                if state.stalled { state.waiting.append(continuation) }
                return state.stalled
            }
            if !stalled { continuation.resume() }
        }
        return try await operation()
    }
}

extension InterceptedStore where Interceptor == StallingInterceptor {
    /// A memory store that stalls on demand.
    package static func stalling() -> InterceptedStore<StallingInterceptor> {
        InterceptedStore(MemoryStore(), interceptor: StallingInterceptor())
    }
}
