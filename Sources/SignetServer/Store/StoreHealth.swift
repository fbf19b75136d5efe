// SPDX-License-Identifier: Apache-2.0
import Logging
import SignetCore
import SignetMiddleware
import Synchronization

/// Whether the store answers, as the gateway's operations on it find it: a circuit breaker that
/// fails fast while the store is down, and says so once when it goes and once when it comes back.
///
/// - **Up** (the start): every operation goes to the store.
/// - **Down**, after an operation passes its deadline or three in a row fail: operations are refused
///   at once (`503 store_unavailable`, `Retry-After`) instead of each waiting out its deadline,
///   except one probe every ``probeInterval``; the first probe that succeeds brings it up again.
///
/// An answer that is a refusal (a device that exists, an account that does not) is the store
/// working. Outlives a reload (``GuardedStore/guarding(_:timeout:metrics:logger:)``).
final class StoreHealth: Sendable {
    private struct State {
        var downSince: ContinuousClock.Instant?
        var consecutiveFailures = 0
        var probing = false
        var lastProbe: ContinuousClock.Instant?
        /// Operations refused without asking the store while it was down.
        var refused = 0
    }

    /// How the store failed an operation, as `signet_store_failures_total` counts it.
    enum Failure: String {
        /// Still waiting at its deadline.
        case timeout
        /// The store, or the connection to it, failed the operation (a value the store refuses is
        /// the request's error, not this).
        case error
        /// Not attempted: the store was down.
        case refused
    }

    /// How often an operation is let through to the store while it is down.
    static let probeInterval: Duration = .milliseconds(250)
    /// Errors in a row that take the store down (a timeout does at once).
    static let failuresToGoDown = 3

    private let state = Mutex(State())
    private let metrics: SignetMetrics
    /// At `notice` or more verbose whatever the configured level: an outage and its end are what
    /// an operator must see even at `--log-level notice`.
    private let logger: Logger

    init(metrics: SignetMetrics, logger: Logger) {
        self.metrics = metrics
        var logger = logger
        if logger.logLevel > .notice { logger.logLevel = .notice }
        self.logger = logger
        metrics.recordStoreUp(true)
    }

    /// Whether an operation may go to the store now. `probe`: a readiness check, which always may.
    /// `canProbe`: whether it may be the one operation that asks a store that is down again — a
    /// request's, bounded by its budget; not a background one, which would hold the probe for its
    /// minute.
    func admit(probe: Bool = false, canProbe: Bool = true) -> Bool {
        let now = ContinuousClock.now
        let admitted = state.withLock { state -> Bool in
            guard state.downSince != nil, !probe else { return true }
            if canProbe, !state.probing, state.lastProbe.map({ now - $0 >= Self.probeInterval }) ?? true {
                state.probing = true
                state.lastProbe = now
                return true
            }
            state.refused += 1
            return false
        }
        if !admitted { metrics.recordStoreFailure(kind: Failure.refused.rawValue) }
        return admitted
    }

    /// The store answered.
    func succeeded() {
        let recovered = state.withLock { state -> (down: Duration, refused: Int)? in
            state.consecutiveFailures = 0
            state.probing = false
            guard let since = state.downSince else { return nil }
            defer {
                state.downSince = nil
                state.refused = 0
                state.lastProbe = nil
            }
            return (ContinuousClock.now - since, state.refused)
        }
        guard let recovered else { return }
        metrics.recordStoreUp(true)
        logger.notice(
            "the store answers again; requests that need it are served",
            metadata: [
                "down_seconds": "\(Double(SignetMetrics.nanoseconds(recovered.down)) / 1e9)",
                "refused_operations": "\(recovered.refused)",
            ]
        )
    }

    /// The store failed `operation`. `conclusive`: a timeout that says the store is down at once
    /// (the operation had its whole time); an operation that had only the rest of a spent budget,
    /// or a readiness probe, counts as an error.
    func failed(_ operation: String, _ failure: Failure, _ error: SignetError, conclusive: Bool = true) {
        metrics.recordStoreFailure(kind: failure.rawValue)
        let wentDown = state.withLock { state -> Bool in
            state.consecutiveFailures += 1
            state.probing = false
            guard state.downSince == nil else { return false }
            guard (failure == .timeout && conclusive) || state.consecutiveFailures >= Self.failuresToGoDown else { return false }
            state.downSince = .now
            state.lastProbe = .now
            return true
        }
        guard wentDown else { return }
        metrics.recordStoreUp(false)
        logger.warning(
            "the store is not answering; requests that need it are refused 503 store_unavailable until it does",
            metadata: ["operation": "\(operation)", "failure": "\(failure.rawValue)", "error": "\(error.reason)"]
        )
    }

    /// An admitted operation its caller cancelled: it says nothing of the store.
    func abandoned() {
        state.withLock { $0.probing = false }
    }
}
