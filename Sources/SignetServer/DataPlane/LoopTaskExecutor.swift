// SPDX-License-Identifier: Apache-2.0
import NIOCore

/// Runs a task's jobs on one event loop: the data plane's verifications (``LoopVerifier``) are
/// async — a key looked up, a nonce claimed in the store — and a task that prefers this executor
/// runs them on the connection's own loop, resuming there after each wait, instead of hopping to
/// Swift's global pool and back (the hops were a fifth of a request's cost on Hummingbird's path).
/// SwiftNIO 2.101 makes event loops serial executors only; a task executor is this much.
package final class LoopTaskExecutor: TaskExecutor {
    private let loop: any EventLoop

    package init(_ loop: any EventLoop) {
        self.loop = loop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// `work` run in a task on this loop; its outcome delivered on the loop. The verify's own
    /// `await`s are `nonisolated(nonsending)`: each switch into a plain `async` function looks this
    /// preference up under the task's lock (docs/decisions.md).
    package func run<T: Sendable>(_ work: nonisolated(nonsending) @escaping @Sendable () async throws -> T) -> EventLoopFuture<T> {
        let promise = loop.makePromise(of: T.self)
        Task(executorPreference: self) {
            do { promise.succeed(try await work()) } catch { promise.fail(error) }
        }
        return promise.futureResult
    }
}
