// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// One operation at a time, across suspension points. An actor alone does not give that: it is
/// reentrant, so a second call runs whenever the first awaits (two registrations at launch would
/// both attest; two assertions would interleave with a key being discarded). Callers wait in the
/// order they came.
///
/// `Locked` rather than `Mutex`: `Mutex` needs iOS 18 and the client supports iOS 17.
final class AsyncSerialGate: Sendable {
    private struct State {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    init() {}

    /// Runs `body` once every operation that entered before it has finished.
    func run<T>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> T
    ) async throws -> T {
        await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if state.busy {
                    state.waiting.append(entered)
                    return false
                }
                state.busy = true
                return true
            }
            if now { entered.resume() }
        }
        defer { leave() }
        return try await body()
    }

    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
