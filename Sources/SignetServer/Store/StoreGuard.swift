// SPDX-License-Identifier: Apache-2.0
import Logging
import SignetCore
import SignetMiddleware
import SignetStore

/// The store as the gateway uses it: every operation through ``StoreGuard``.
typealias GuardedStore = InterceptedStore<StoreGuard>

/// What stands around every store operation of the gateway: none waits past its time, and none is
/// attempted while the store is known to be down (``StoreHealth``).
///
/// The invariant: **a complete request waits for the store at most `storeTimeoutMilliseconds`**, all
/// its operations together (``StoreBudget``; the screen of its head has a budget of its own): past
/// it the request is refused `503 store_unavailable` with `Retry-After`, and so never forwarded. PostgreSQL's client waits for a connection as long as
/// the server is away, and a query on a connection whose server vanished waits for TCP to give up:
/// without this, an outage held every request for its whole length and then executed them late.
///
/// An operation runs in a task of its own and the caller waits for whichever comes first, its answer
/// or its time (``StoreWatchdog``): a task group would wait for a child that ignores cancellation,
/// which a query on a dead connection does. A store that bounds its own waits (SQLite: a local file
/// whose lock waits end after its `busy_timeout`) is not raced — the extra task per operation cost a
/// verified request about 30 µs on one core — but an answer it gives past the request's time is
/// refused as a timeout; readiness probes are raced on every store. An operation past its time is cancelled and left to
/// finish; a nonce it claims late is burnt, never forwarded (the client retries with a fresh one).
/// Operations outside a request (sweeps, the console's flushes, receipt refreshes) have
/// ``backgroundTimeout``.
struct StoreGuard: StoreInterceptor {
    /// A request's time for the store, all its operations together.
    let timeout: Duration
    let health: StoreHealth
    let watchdog: StoreWatchdog
    /// The store bounds its own waits (SQLite's lock timeout, memory): its operations run in the
    /// caller's task, not raced against the deadline — the race's task of its own per operation is
    /// what a verified request would pay for on the store it cannot need it on.
    let runsInline: Bool

    /// What an operation outside any request may take: a sweep of a large table may take long.
    static let backgroundTimeout: Duration = .seconds(60)
    /// An operation that timed out with less time than this (the rest of a request's spent budget)
    /// does not by itself say that the store is down.
    static let conclusiveTimeout: Duration = .milliseconds(250)

    /// `store` guarded with `timeout`; a store guarded already (a reload passes the running one)
    /// keeps its store and its health, with the new timeout.
    static func guarding(_ store: any SignetStorage, timeout: Duration, metrics: SignetMetrics, logger: Logger) -> GuardedStore {
        if let guarded = store as? GuardedStore {
            let kept = guarded.interceptor
            return GuardedStore(
                guarded.base,
                interceptor: StoreGuard(timeout: timeout, health: kept.health, watchdog: kept.watchdog, runsInline: kept.runsInline)
            )
        }
        let guarding = StoreGuard(
            timeout: timeout,
            health: StoreHealth(metrics: metrics, logger: logger),
            watchdog: StoreWatchdog(),
            runsInline: store.boundsItsOwnWaits
        )
        return GuardedStore(store, interceptor: guarding)
    }

    static func unavailable(_ reason: String) -> SignetError {
        var error = SignetError(.storeUnavailable, reason)
        error.retryAfterSeconds = 1
        return error
    }

    nonisolated(nonsending) func run<T: Sendable>(_ name: String, probe: Bool, _ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T) async throws -> T {
        let budget = StoreBudget.current
        let allowed = budget?.left ?? Self.backgroundTimeout
        guard allowed > .zero else {
            throw Self.unavailable("the request's time for the store ran out before \(name)")
        }
        guard health.admit(probe: probe, canProbe: budget != nil) else {
            throw Self.unavailable("the store is not answering")
        }
        let started = ContinuousClock.now
        defer { budget?.spend(ContinuousClock.now - started) }
        do {
            // A readiness probe is always raced: `/readyz` answers within its bound whatever the store does.
            let inline = runsInline && !probe
            let value = inline ? try await operation() : try await race(operation, until: started + allowed)
            // An answer past the request's time is refused all the same: what it claimed is burnt,
            // and nothing is forwarded late.
            if inline, ContinuousClock.now - started > allowed { throw TimedOut() }
            health.succeeded()
            return value
        } catch is CancellationError {
            health.abandoned()
            throw CancellationError()
        } catch is TimedOut {
            let error = Self.unavailable("the store did not answer \(name) in time")
            health.failed(name, .timeout, error, conclusive: !probe && allowed >= Self.conclusiveTimeout)
            throw error
        } catch let error as SignetError where error.code == .storeUnavailable {
            var error = error
            error.retryAfterSeconds = error.retryAfterSeconds ?? 1
            health.failed(name, .error, error)
            throw error
        } catch let error as SignetError {
            // An answer: a device that exists, an account that does not.
            health.succeeded()
            throw error
        } catch {
            let failure = Self.unavailable("the store failed \(name)")
            health.failed(name, .error, failure)
            throw failure
        }
    }

    /// `operation` in a task of its own, and whichever comes first: its answer, `deadline`
    /// (``TimedOut``), or the caller's cancellation (a shutdown stops waiting at once).
    private func race<T: Sendable>(_ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> T, until deadline: ContinuousClock.Instant) async throws -> T {
        let result = OnceContinuation<T>()
        let work = Task {
            do { result.resume(.success(try await operation())) } catch { result.resume(.failure(error)) }
        }
        let watched = watchdog.watch(until: deadline) {
            if result.resume(.failure(TimedOut())) { work.cancel() }
        }
        defer { watchdog.release(watched) }
        return try await withTaskCancellationHandler {
            try await result.value()
        } onCancel: {
            if result.resume(.failure(CancellationError())) { work.cancel() }
        }
    }

    private struct TimedOut: Error {}
}
