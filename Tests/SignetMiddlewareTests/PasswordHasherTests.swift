// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware
import Synchronization
import Testing

/// Slow password work runs a bounded amount at once; past the queue it is refused at once.
@Suite struct PasswordHasherTests {
    @Test func aFullQueueIsRefusedWithRetryAfterAndTheQueuedWorkStillRuns() async throws {
        let hasher = PasswordHasher(concurrency: 1, maximumQueued: 1)
        let gate = DispatchSemaphore(value: 0)
        let started = Atomic<Int>(0)
        async let first: Int = hasher.run {
            started.add(1, ordering: .relaxed)
            gate.wait()
            return 1
        }
        while started.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        async let second: Int = hasher.run { 2 }
        // Let the second take its place in the queue.
        try await Task.sleep(for: .milliseconds(100))
        let error = await #expect(throws: SignetError.self) { try await hasher.run { 3 } }
        #expect(error?.code == .rateLimited && error?.retryAfterSeconds == 1)
        gate.signal()
        #expect(try await first == 1)
        #expect(try await second == 2)
        // Turns are handed back: it takes work again.
        #expect(try await hasher.run { 4 } == 4)
    }
}
