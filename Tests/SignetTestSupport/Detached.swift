// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Runs blocking work (a child process to its end) on a Dispatch thread, so that Swift's cooperative
/// threads stay free for a server this test runs in-process and the work talks to.
public func detached<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}
