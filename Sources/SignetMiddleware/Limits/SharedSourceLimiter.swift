// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore

/// A per-source limit that every instance sharing a store enforces together: each request is counted
/// in the store (the windows of `LoginThrottleStore`, under `limit:<name>:<source>`), so two
/// gateways behind a balancer give a source its `limit` once, not once each, and a reload or a
/// restart gives it no fresh allowance.
///
/// A window opens with a source's first request and lasts `windowSeconds`, as
/// ``SourceRateLimiter``'s does. Every request is also counted in this process
/// (``SourceRateLimiter``), first: a source past the limit here is refused without asking the store,
/// and when the store cannot count (an outage, past its deadline) this count decides, so a limit
/// holds per instance rather than failing open or refusing everyone. A limiter without a store is
/// that count alone. The store is asked at most `storeOperationsPerSecond` times a second
/// (`StoreOperationBudget`); past that, too, this process's count decides.
public struct SharedSourceLimiter: Sendable {
    /// What is limited, in the store's subject (`challenges`, `admin-failures`…).
    public let name: String
    /// This process's own count: the bound while the store cannot answer.
    let local: SourceRateLimiter
    let store: (any LoginThrottleStore)?
    let budget: StoreOperationBudget

    public var limit: Int { local.limit }

    /// - Parameters:
    ///   - name: What is limited, in the store's subject (`challenges`, `admin-failures`…).
    ///   - limit: Requests a source may make in a window.
    ///   - store: Where every instance counts; `nil`: this process alone.
    ///   - windowSeconds: How long a window lasts from a source's first request.
    ///   - storeOperationsPerSecond: What this limit may ask of the store each second, in this
    ///     process; past it, this process's count decides.
    public init(
        _ name: String,
        limit: Int,
        store: (any LoginThrottleStore)?,
        windowSeconds: Int64 = 60,
        storeOperationsPerSecond: Int = 250
    ) {
        self.name = name
        self.local = SourceRateLimiter(limit: limit, windowSeconds: windowSeconds)
        self.store = store
        self.budget = StoreOperationBudget(perSecond: storeOperationsPerSecond)
    }

    /// Counts one request from `source`; over the limit, `rate_limited` with `Retry-After` (the
    /// seconds until the source's window ends).
    public func admit(_ source: String?, now: Date, refusing reason: String) async throws {
        // Past the limit in this process alone is past it everywhere: refused without a write, so a
        // flood from one source costs the store at most `limit` writes a window per instance.
        guard local.allow(source, now: now) else { throw local.refusal(source, now: now, reason) }
        // `nil`: no store, or it cannot count now; this process's count let it through.
        if let counted = await countInStore(source, now: now), counted.count > limit {
            throw Self.refusal(reason, until: counted.windowEnd, now: now)
        }
    }

    /// When `source`'s window ends, if it has used up the limit; `nil` while it has not. Counts
    /// nothing (a limit of failures asks this first).
    public func exhausted(_ source: String?, now: Date) async -> Date? {
        // This process's count first: a failure the store missed (its time was up) still counts.
        if local.isExceeded(source, now: now) { return local.windowEnd(source, now: now) }
        guard let store, budget.take(now: now), let found = try? await store.loginFailures(subjects: [subject(source)], now: now),
            let window = found[subject(source)], window.count >= limit
        else { return nil }
        return window.windowEnd
    }

    /// Throws `rate_limited` when `source` has used up the limit.
    public func check(_ source: String?, now: Date, refusing reason: String) async throws {
        if let end = await exhausted(source, now: now) { throw Self.refusal(reason, until: end, now: now) }
    }

    /// Counts one against `source` without deciding anything (a failure, after it happened).
    public func record(_ source: String?, now: Date) async {
        _ = local.allow(source, now: now)
        _ = await countInStore(source, now: now)
    }

    /// Runs `check` unless `source` has used up the limit, and counts one when it returns `false`: a
    /// limit of failures. In this process the look, the check and the count are one critical section;
    /// across instances, attempts in flight at once may each pass before the others are counted.
    ///
    /// - Throws: `rate_limited` for a source past the limit (`check` did not run).
    public func attempt(_ source: String?, now: Date, refusing reason: String, check: () -> Bool) async throws -> Bool {
        try await self.check(source, now: now, refusing: reason)
        guard let passed = local.attempt(source, now: now, check: check) else {
            throw local.refusal(source, now: now, reason)
        }
        if !passed { _ = await countInStore(source, now: now) }
        return passed
    }

    /// Counts one against `source` in the store: its window's count, `nil` without a store, when
    /// the store cannot count now, or past this second's budget.
    private func countInStore(_ source: String?, now: Date) async -> LoginFailures? {
        guard let store, budget.take(now: now) else { return nil }
        return try? await store.recordLoginFailure(subject: subject(source), window: local.window, now: now)
    }

    func subject(_ source: String?) -> String { "limit:\(name):\(IPAddress.sourceKey(source))" }

    static func refusal(_ reason: String, until end: Date, now: Date) -> SignetError {
        var error = SignetError(.rateLimited, reason)
        error.retryAfterSeconds = max(1, Int(end.timeIntervalSince(now).rounded(.up)))
        return error
    }
}
