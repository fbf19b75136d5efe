// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// How long the request being judged may still wait for the store, all its operations together.
///
/// Set for the screen of a request's head and again once it is complete (``RequestCompletionResponder``),
/// and for a readiness probe; ``GuardedStore`` gives each operation what is left and takes off what
/// it waited. A budget for the store's waits only — a password hash or an exchange with Apple is not
/// the store's time — and for all of them together: three slow operations in a row cannot hold a
/// request three times as long.
final class StoreBudget: Sendable {
    @TaskLocal static var current: StoreBudget?

    private let remaining: Mutex<Duration>

    private init(_ total: Duration) {
        remaining = Mutex(total)
    }

    /// Runs `body` with a budget of `total`.
    nonisolated(nonsending) static func within<T>(_ total: Duration, _ body: nonisolated(nonsending) () async throws -> T) async rethrows -> T {
        try await $current.withValue(StoreBudget(total), operation: body)
    }

    /// What is left.
    var left: Duration { remaining.withLock { $0 } }

    /// Takes `waited` off what is left.
    func spend(_ waited: Duration) {
        remaining.withLock { $0 -= waited }
    }
}
