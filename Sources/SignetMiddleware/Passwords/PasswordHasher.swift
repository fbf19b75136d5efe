// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOPosix
import SignetCore
import Synchronization

/// Runs slow password work (PBKDF2) on NIO's thread pool, never on an event loop or in the task
/// pool, at most ``concurrency`` at once with at most ``maximumQueued`` waiting; past that,
/// `rate_limited` at once. A flood of Basic logins therefore costs a bounded share of the CPU and
/// never starves verified traffic.
public final class PasswordHasher: Sendable {
    public let concurrency: Int
    public let maximumQueued: Int

    private struct State {
        var running = 0
        var queue: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// - Parameters:
    ///   - concurrency: Derivations running at once (half the cores by default, at least one).
    ///   - maximumQueued: Derivations waiting for a turn before new ones are refused.
    public init(concurrency: Int = max(1, System.coreCount / 2), maximumQueued: Int = 32) {
        self.concurrency = max(1, concurrency)
        self.maximumQueued = max(0, maximumQueued)
    }

    /// Runs `work` when a turn is free.
    ///
    /// - Throws: `rate_limited` (with `Retry-After: 1`) when too many wait already; what `work` throws.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await NIOThreadPool.singleton.runIfActive(work)
    }

    private func acquire() async throws {
        enum Admission { case run, wait, refuse }
        let admission = state.withLock { state -> Admission in
            if state.running < concurrency {
                state.running += 1
                return .run
            }
            return state.queue.count < maximumQueued ? .wait : .refuse
        }
        switch admission {
        case .run: return
        case .refuse:
            var error = SignetError(.rateLimited, "too many password checks are waiting")
            error.retryAfterSeconds = 1
            throw error
        case .wait:
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    // A turn may have been freed between the two locks.
                    if state.running < concurrency {
                        state.running += 1
                        return true
                    }
                    state.queue.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Hands the turn to the first waiter, or frees it.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.queue.isEmpty {
                state.running -= 1
                return nil
            }
            return state.queue.removeFirst()
        }
        next?.resume()
    }
}
