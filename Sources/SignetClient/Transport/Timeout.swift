// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// Runs `body`, failing with `request_timeout` after `timeout` (cancelling `body`).
func withTimeout<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw SignetError(.requestTimeout, "no answer within \(timeout)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
