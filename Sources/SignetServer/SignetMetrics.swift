// SPDX-License-Identifier: Apache-2.0
import CoreMetrics
import Prometheus
import Synchronization

/// Request outcomes and verification latency, exposed at `/metrics` in Prometheus text format.
///
/// Each gateway owns its registry (no process-wide bootstrap), so several can run in one process.
public final class SignetMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// Counters by outcome and reason, made once: creating one per request costs a registry lookup.
    private let counters = Mutex<[String: CoreMetrics.Counter]>([:])
    private let verificationTimer: CoreMetrics.Timer

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(100), .seconds(1),
        ]
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

    /// The Prometheus exposition text.
    public func exposition() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}
