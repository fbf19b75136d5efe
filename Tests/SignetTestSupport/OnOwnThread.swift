// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Runs blocking work (a child process to its end, a server's banner) on a thread of its own.
///
/// Neither a task nor `DispatchQueue.global()` will do: on Linux both run on the same pool, as wide
/// as the machine has cores, so two tests waiting on children there leave no thread for the
/// in-process server the children talk to, nor for any other test.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
