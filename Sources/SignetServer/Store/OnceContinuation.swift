// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// A result that the first of several racers gives, awaited once: the store's answer or its
/// deadline, whichever comes first (``GuardedStore``). A result given before anyone waits is kept.
final class OnceContinuation<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case given(Result<Value, any Error>)
        case waiting(CheckedContinuation<Value, any Error>)
        case done
    }

    private let state = Mutex(State.empty)

    init() {}

    /// Gives the result; `false` when one was given already (this one is dropped).
    @discardableResult
    func resume(_ result: Result<Value, any Error>) -> Bool {
        let (first, waiting) = state.withLock { state -> (Bool, CheckedContinuation<Value, any Error>?) in
            switch state {
            case .empty:
                state = .given(result)
                return (true, nil)
            case .waiting(let continuation):
                state = .done
                return (true, continuation)
            case .given, .done:
                return (false, nil)
            }
        }
        waiting?.resume(with: result)
        return first
    }

    /// The first result given.
    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let given = state.withLock { state -> Result<Value, any Error>? in
                if case .given(let result) = state {
                    state = .done
                    return result
                }
                guard case .empty = state else { preconditionFailure("a OnceContinuation is awaited once") }
                state = .waiting(continuation)
                return nil
            }
            if let given { continuation.resume(with: given) }
        }
    }
}
