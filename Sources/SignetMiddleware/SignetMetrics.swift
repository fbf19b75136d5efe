// SPDX-License-Identifier: Apache-2.0
import CoreMetrics
import Synchronization

/// Request outcomes (`signet_requests_total` by outcome and reason code) and verification latency
/// (`signet_verification_seconds`), recorded through swift-metrics.
///
/// The middleware records into whatever backend the app uses: the process-wide `MetricsSystem` by
/// default, or a factory of its own. The gateway gives each instance its own Prometheus registry
/// (`PrometheusExposition`), so several gateways can run in one process.
public final class SignetMetrics: Sendable {
    private let factory: any MetricsFactory
    /// Counters by outcome and reason, made once: creating one per request costs a registry lookup.
    private let counters = Mutex<[String: CoreMetrics.Counter]>([:])
    private let verificationTimer: CoreMetrics.Timer

    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        self.verificationTimer = Timer(label: "signet_verification_seconds", dimensions: [], factory: factory)
    }

    /// Counts one request by outcome (`accepted`, `rejected`, `public`) and reason code.
    public func record(outcome: String, reason: String?) {
        let reason = reason ?? "none"
        let counter = counters.withLock { counters in
            if let counter = counters[outcome + "|" + reason] { return counter }
            let counter = Counter(
                label: "signet_requests_total",
                dimensions: [("outcome", outcome), ("reason", reason)],
                factory: factory
            )
            counters[outcome + "|" + reason] = counter
            return counter
        }
        counter.increment()
    }

    /// Records how long verification took.
    public func recordVerification(_ duration: Duration) {
        verificationTimer.recordNanoseconds(
            duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        )
    }
}
