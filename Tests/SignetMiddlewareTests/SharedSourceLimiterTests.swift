// SPDX-License-Identifier: Apache-2.0
import Foundation
import PropertyBased
import SignetCore
import SignetStore
import Synchronization
import Testing

import SignetMiddleware

/// Per-source limits that every instance on one store enforces together (issue 40 §4: one client
/// through two instances got 118 of 130 challenges where the limit was 60).
@Suite struct SharedSourceLimiterTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// Instances that each count into one store: admitted whether or not `admit` threw.
    static func admitted(_ limiter: SharedSourceLimiter, _ source: String, at now: Date) async -> Bool {
        do {
            try await limiter.admit(source, now: now, refusing: "test")
            return true
        } catch {
            return false
        }
    }

    /// However requests from one source are spread over however many instances, exactly `limit`
    /// are admitted in a window, and every refusal says when the window ends.
    @Test func instancesOnOneStoreAdmitTheLimitOnceBetweenThem() async throws {
        await propertyCheck(count: 60, input: Gen.int(in: 1...4), Gen.int(in: 1...12), Gen.int(in: 0...3).array(of: 0...40)) {
            instanceCount, limit, spread in
            let store = MemoryStore()
            let instances = (0..<instanceCount).map { _ in SharedSourceLimiter("challenges", limit: limit, store: store) }
            var admitted = 0
            for (index, pick) in spread.enumerated() {
                let now = Self.t0.addingTimeInterval(Double(index) * 0.1)
                if await Self.admitted(instances[pick % instanceCount], "192.0.2.7", at: now) { admitted += 1 }
            }
            #expect(admitted == min(limit, spread.count), "\(instanceCount) instances, limit \(limit), \(spread)")
        }
    }

    @Test func aRefusalSaysWhenTheSharedWindowEnds() async throws {
        let store = MemoryStore()
        let a = SharedSourceLimiter("challenges", limit: 2, store: store)
        let b = SharedSourceLimiter("challenges", limit: 2, store: store)
        try await a.admit("192.0.2.7", now: Self.t0, refusing: "test")
        try await a.admit("192.0.2.7", now: Self.t0.addingTimeInterval(1), refusing: "test")
        // B has counted nothing itself: the store's window refuses it, 59 s before that window ends.
        let error = await #expect(throws: SignetError.self) {
            try await b.admit("192.0.2.7", now: Self.t0.addingTimeInterval(1), refusing: "too many")
        }
        #expect(error?.code == .rateLimited && error?.retryAfterSeconds == 59)
        #expect(await Self.admitted(b, "192.0.2.8", at: Self.t0.addingTimeInterval(1)), "another source has its own count")
        #expect(await Self.admitted(b, "192.0.2.7", at: Self.t0.addingTimeInterval(60)), "a new window after 60 s")
        // Two limits never share a count.
        let other = SharedSourceLimiter("pin-reports", limit: 1, store: store)
        #expect(await Self.admitted(other, "192.0.2.7", at: Self.t0.addingTimeInterval(1)))
    }

    /// Failed admin credentials on one instance lock the source out of every other, before its
    /// credential is looked at.
    @Test func failuresOnOneInstanceLockTheSourceOutOfAnother() async throws {
        let store = MemoryStore()
        let a = SharedSourceLimiter("admin-failures", limit: 3, store: store)
        let b = SharedSourceLimiter("admin-failures", limit: 3, store: store)
        for second in 0..<3 {
            let passed = try await a.attempt("192.0.2.7", now: Self.t0.addingTimeInterval(Double(second)), refusing: "test") { false }
            #expect(!passed)
        }
        var looked = false
        await #expect(throws: SignetError.self) {
            _ = try await b.attempt("192.0.2.7", now: Self.t0.addingTimeInterval(3), refusing: "test") {
                looked = true
                return true
            }
        }
        #expect(!looked, "the right credential is not even compared")
        #expect(await b.exhausted("192.0.2.7", now: Self.t0.addingTimeInterval(3)) == Self.t0.addingTimeInterval(60))
    }

    /// A store that cannot count (an outage) neither opens the limit nor refuses everyone: this
    /// process's own count decides.
    @Test func withoutTheStoreEachInstanceStillHoldsTheLimit() async throws {
        let limiter = SharedSourceLimiter("challenges", limit: 3, store: FailingCounter())
        var answers: [Bool] = []
        for second in 0..<5 { answers.append(await Self.admitted(limiter, "192.0.2.7", at: Self.t0.addingTimeInterval(Double(second)))) }
        #expect(answers == [true, true, true, false, false])
        #expect(await limiter.exhausted("192.0.2.7", now: Self.t0.addingTimeInterval(5)) == Self.t0.addingTimeInterval(60))
        #expect(await Self.admitted(limiter, "192.0.2.8", at: Self.t0.addingTimeInterval(5)))
    }

    /// A source past the limit in one process is refused without a write: a flood costs the store
    /// at most `limit` writes a window per instance.
    @Test func aSourcePastTheLimitHereCostsTheStoreNothing() async throws {
        let store = CountingCounter()
        let limiter = SharedSourceLimiter("challenges", limit: 5, store: store)
        for index in 0..<1_000 { _ = await Self.admitted(limiter, "192.0.2.7", at: Self.t0.addingTimeInterval(Double(index) * 0.01)) }
        #expect(store.writes.withLock { $0 } == 5)
    }

    /// A flood from many sources, each within its limit, costs the store at most the budget a
    /// second: past it this process's count decides, and each source is still held to its limit.
    @Test func aFloodFromManySourcesCostsTheStoreItsBudgetAtMost() async throws {
        let store = CountingCounter()
        let limiter = SharedSourceLimiter("challenges", limit: 2, store: store, storeOperationsPerSecond: 20)
        var admitted = 0
        // 3,000 requests over three seconds, from 1,000 sources, three each.
        for index in 0..<3_000 {
            let now = Self.t0.addingTimeInterval(Double(index) / 1_000)
            if await Self.admitted(limiter, "2001:db8:\(index % 1_000)::1", at: now) { admitted += 1 }
        }
        #expect(admitted == 2_000, "every source held to 2, counted here where the store was not asked")
        let writes = store.writes.withLock { $0 }
        // The bucket's first second, then 20 a second; the third round is refused here, unasked.
        #expect(writes <= 20 + 3 * 20 && writes >= 2 * 20, "\(writes) writes")
    }
}

/// A store whose every count fails, as one does during an outage.
private struct FailingCounter: LoginThrottleStore {
    func recordLoginFailure(subject: String, window: TimeInterval, now: Date) async throws -> LoginFailures {
        throw SignetError(.storeUnavailable, "the store is away")
    }
    func loginFailures(subjects: [String], now: Date) async throws -> [String: LoginFailures] {
        throw SignetError(.storeUnavailable, "the store is away")
    }
    func clearLoginFailures(subject: String) async throws {}
}

/// A memory store's counts, with its writes counted.
private final class CountingCounter: LoginThrottleStore {
    let base = MemoryStore()
    let writes = Mutex(0)
    func recordLoginFailure(subject: String, window: TimeInterval, now: Date) async throws -> LoginFailures {
        writes.withLock { $0 += 1 }
        return try await base.recordLoginFailure(subject: subject, window: window, now: now)
    }
    func loginFailures(subjects: [String], now: Date) async throws -> [String: LoginFailures] {
        try await base.loginFailures(subjects: subjects, now: now)
    }
    func clearLoginFailures(subject: String) async throws {}
}
