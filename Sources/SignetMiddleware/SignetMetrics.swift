// SPDX-License-Identifier: Apache-2.0
import CoreMetrics
import SignetCore
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
    /// Where the operator console's counts and refusals are kept until flushed; `nil` outside the gateway.
    public let activity: ActivityRecorder?

    /// - Parameters:
    ///   - factory: The swift-metrics backend.
    ///   - activity: Also counts outcomes and keeps refusals for the operator console.
    public init(factory: any MetricsFactory = MetricsSystem.factory, activity: ActivityRecorder? = nil) {
        self.factory = factory
        self.activity = activity
        self.verificationTimer = Timer(label: "signet_verification_seconds", dimensions: [], factory: factory)
    }

    /// Counts one request by outcome (`accepted`, `rejected`, `public`) and reason code.
    public func record(outcome: String, reason: String?) {
        increment(outcome: outcome, reason: reason)
        activity?.count(outcome: outcome, reason: reason)
    }

    /// The Prometheus counter alone.
    private func increment(outcome: String, reason: String?) {
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

    /// Counts one accepted request and, when it came from a registered device, notes the device as seen.
    public func recordAccepted(_ identity: SignetIdentity?) {
        increment(outcome: "accepted", reason: nil)
        activity?.accepted(deviceID: identity?.deviceID)
    }

    /// Counts one refused request and keeps it for the console's refusals page: what names the
    /// request (method, path without query, claimed key id, source), never its signature or body.
    public func recordRefusal(
        _ code: SignetError.Code,
        method: String,
        path: String,
        keyID: String?,
        source: String?
    ) {
        record(outcome: "rejected", reason: code.rawValue)
        activity?.refused(
            reason: code.rawValue,
            status: code.httpStatus,
            method: method,
            path: path,
            keyID: keyID,
            source: source
        )
    }

    /// Records how long verification took.
    public func recordVerification(_ duration: Duration) {
        verificationTimer.recordNanoseconds(
            duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        )
    }
}
