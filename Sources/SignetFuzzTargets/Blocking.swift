// SPDX-License-Identifier: Apache-2.0
import Dispatch

/// Runs an async API from libFuzzer's synchronous callback: the harness waits, one input at a time.
func blocking<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
    let outcome = Outcome<Value>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

/// Written by the task before it signals, read by the waiter after: the semaphore orders the two.
private final class Outcome<Value>: @unchecked Sendable {
    var result: Result<Value, any Error>?
}
