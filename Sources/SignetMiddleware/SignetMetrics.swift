// SPDX-License-Identifier: Apache-2.0
import CoreMetrics
import HTTPTypes
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
    /// `monitored`: a `monitor` route forwarded it, and this is the refusal enforcing would have
    /// made (`signet_requests_total{outcome="monitored"}`, marked so on the refusals page).
    public func recordRefusal(
        _ code: SignetError.Code,
        method: String,
        path: String,
        keyID: String?,
        source: String?,
        monitored: Bool = false
    ) {
        record(outcome: monitored ? "monitored" : "rejected", reason: code.rawValue)
        activity?.refused(
            reason: code.rawValue,
            status: code.httpStatus,
            method: method,
            path: path,
            keyID: keyID,
            source: source,
            monitored: monitored
        )
    }

    /// ``recordRefusal(_:method:path:keyID:source:monitored:)`` for the request `head`: its path
    /// without the query, and the key id its `Signature-Input` claims where no verified `keyID` is
    /// given. Every refusal of a request is recorded through this one, whichever path refused it.
    public func recordRefusal(_ code: SignetError.Code, of head: HTTPRequest, keyID: String? = nil, source: String?, monitored: Bool = false) {
        recordRefusal(
            code,
            method: head.method.rawValue,
            path: String((head.path ?? "/").prefix { $0 != "?" }),
            keyID: keyID ?? ActivityRecorder.claimedKeyID(signatureInput: head.headerFields[.signatureInput]),
            source: source,
            monitored: monitored
        )
    }

    /// `signet_would_refuse_total` by route and reason code: what enforcing a `monitor` route
    /// would refuse, as the access log line names the route.
    public func recordWouldRefuse(route: String, reason: String) {
        counter("signet_would_refuse_total", [("route", route), ("reason", reason)]).increment()
    }

    /// Counters and timers other than the outcome counters, by name and dimensions, made once.
    private let instruments = Mutex<[InstrumentKey: any AnyObject & Sendable]>([:])

    /// An instrument's label and dimensions, hashed as they are: a key string built per lookup
    /// was a request's largest metrics cost (issue 39's profile).
    private struct InstrumentKey: Hashable {
        let label: String
        let dimensions: [(String, String)]

        static func == (left: Self, right: Self) -> Bool {
            left.label == right.label && left.dimensions.elementsEqual(right.dimensions) { $0 == $1 }
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(label)
            for (name, value) in dimensions {
                hasher.combine(name)
                hasher.combine(value)
            }
        }
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Counter {
        instrument(label, dimensions) { Counter(label: label, dimensions: dimensions, factory: factory) }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        instrument(label, dimensions) { Timer(label: label, dimensions: dimensions, factory: factory) }
    }

    private func instrument<T: AnyObject & Sendable>(
        _ label: String,
        _ dimensions: [(String, String)],
        make: () -> T
    ) -> T {
        let key = InstrumentKey(label: label, dimensions: dimensions)
        return instruments.withLock { instruments in
            if let existing = instruments[key] as? T { return existing }
            let made = make()
            instruments[key] = made
            return made
        }
    }

    /// One answered request, as its access log line says it: `signet_http_requests_total` by
    /// route (the configured prefix, or Signet's own endpoint), status code and reason code;
    /// `signet_http_request_duration_seconds` by route; and, when it went upstream,
    /// `signet_upstream_responses_total` by the upstream's status and
    /// `signet_upstream_response_duration_seconds`.
    public func recordExchange(
        route: String,
        status: Int,
        reason: String?,
        duration: Duration,
        upstreamStatus: Int?,
        upstreamDuration: Duration?
    ) {
        let instruments = exchangeInstruments(route: route, status: status, reason: reason, upstreamStatus: upstreamStatus)
        instruments.requests.increment()
        instruments.duration.recordNanoseconds(Self.nanoseconds(duration))
        instruments.upstreamResponses?.increment()
        if let upstreamDuration {
            (instruments.upstreamDuration ?? timer("signet_upstream_response_duration_seconds", []))
                .recordNanoseconds(Self.nanoseconds(upstreamDuration))
        }
    }

    /// The instruments of an answered request, by what picks them: found once per route, status,
    /// reason and upstream status. Four look-ups by label and dimensions (arrays made, strings
    /// hashed and a cast) on every answer were a proxied request's largest metrics cost.
    private let exchanges = Mutex<[ExchangeKey: ExchangeInstruments]>([:])

    private struct ExchangeKey: Hashable {
        let route: String
        let status: Int
        let reason: String?
        let upstreamStatus: Int?
    }

    private final class ExchangeInstruments: Sendable {
        let requests: CoreMetrics.Counter
        let duration: CoreMetrics.Timer
        let upstreamResponses: CoreMetrics.Counter?
        /// Made with the first answer an upstream gave, as before: no empty series on a gateway
        /// that has only refused.
        let upstreamDuration: CoreMetrics.Timer?

        init(requests: CoreMetrics.Counter, duration: CoreMetrics.Timer, upstreamResponses: CoreMetrics.Counter?, upstreamDuration: CoreMetrics.Timer?) {
            self.requests = requests
            self.duration = duration
            self.upstreamResponses = upstreamResponses
            self.upstreamDuration = upstreamDuration
        }
    }

    private func exchangeInstruments(route: String, status: Int, reason: String?, upstreamStatus: Int?) -> ExchangeInstruments {
        let key = ExchangeKey(route: route, status: status, reason: reason, upstreamStatus: upstreamStatus)
        if let found = exchanges.withLock({ $0[key] }) { return found }
        let made = ExchangeInstruments(
            requests: counter("signet_http_requests_total", [("route", route), ("code", String(status)), ("reason", reason ?? "none")]),
            duration: timer("signet_http_request_duration_seconds", [("route", route)]),
            upstreamResponses: upstreamStatus.map { counter("signet_upstream_responses_total", [("code", String($0))]) },
            upstreamDuration: upstreamStatus == nil ? nil : timer("signet_upstream_response_duration_seconds", [])
        )
        exchanges.withLock { $0[key] = made }
        return made
    }

    /// One store operation on the request path (`nonce_claim`, `device_lookup`):
    /// `signet_store_operation_duration_seconds` and, when it threw, `signet_store_errors_total`.
    public func recordStore(_ operation: String, duration: Duration, failed: Bool) {
        timer("signet_store_operation_duration_seconds", [("operation", operation)])
            .recordNanoseconds(Self.nanoseconds(duration))
        if failed { counter("signet_store_errors_total", [("operation", operation)]).increment() }
    }

    /// One store operation the gateway's guard saw fail (`signet_store_failures_total` by kind:
    /// `timeout`, `error`, or `refused` without asking a store that is down).
    public func recordStoreFailure(kind: String) {
        counter("signet_store_failures_total", [("kind", kind)]).increment()
    }

    /// `signet_store_up`: 1 while the store answers, 0 while the gateway takes it to be down.
    public func recordStoreUp(_ up: Bool) {
        instrument("signet_store_up", []) { Gauge(label: "signet_store_up", dimensions: [], factory: factory) }
            .record(up ? 1 : 0)
    }

    /// `signet_configuration_reloads_total` by result: `applied` or `refused`.
    public func recordReload(applied: Bool) {
        counter("signet_configuration_reloads_total", [("result", applied ? "applied" : "refused")]).increment()
    }

    /// Both reload series at 0, so that `increase(…)` sees the first refusal after a start.
    public func prepareReloadCounts() {
        _ = counter("signet_configuration_reloads_total", [("result", "applied")])
        _ = counter("signet_configuration_reloads_total", [("result", "refused")])
    }

    /// `signet_nonce_claims_total` by result: `claimed` the first time, `replayed` after.
    public func recordNonceClaim(fresh: Bool) {
        claimInstruments(fresh: fresh).counter.increment()
    }

    /// A claim the store answered: its time (``recordStore(_:duration:failed:)`` as `nonce_claim`)
    /// and its result (``recordNonceClaim(fresh:)``), both instruments found once.
    public func recordNonceClaim(fresh: Bool, duration: Duration) {
        let instruments = claimInstruments(fresh: fresh)
        instruments.timer.recordNanoseconds(Self.nanoseconds(duration))
        instruments.counter.increment()
    }

    /// The two instruments of a claim, by its result. Every verified request makes a claim: a
    /// look-up by label and dimensions (an array made, four strings hashed) for each was a
    /// measurable part of a verify's cost.
    private let claims = Mutex<(claimed: ClaimInstruments?, replayed: ClaimInstruments?)>((nil, nil))

    private struct ClaimInstruments: Sendable {
        let timer: CoreMetrics.Timer
        let counter: CoreMetrics.Counter
    }

    private func claimInstruments(fresh: Bool) -> ClaimInstruments {
        if let found = claims.withLock({ fresh ? $0.claimed : $0.replayed }) { return found }
        let made = ClaimInstruments(
            timer: timer("signet_store_operation_duration_seconds", [("operation", "nonce_claim")]),
            counter: counter("signet_nonce_claims_total", [("result", fresh ? "claimed" : "replayed")])
        )
        claims.withLock { if fresh { $0.claimed = made } else { $0.replayed = made } }
        return made
    }

    public static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    /// Records how long verification took.
    public func recordVerification(_ duration: Duration) {
        verificationTimer.recordNanoseconds(Self.nanoseconds(duration))
    }
}
