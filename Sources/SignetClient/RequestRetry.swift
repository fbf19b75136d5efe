// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// When and how the client sends a request again: failures to reach the gateway, `503`, and
/// answers with `Retry-After`, with exponential backoff and full jitter (App Check's core does the
/// same). Every try is signed anew (a new nonce, a new `created`).
///
/// A retry must not make the upstream execute a request twice, so what is retried depends on what
/// the failure says about the first try:
///
/// - **Nothing was sent** (no connection could be made): any method.
/// - **It may have been executed** (the connection broke, no answer in time, a `503` from behind
///   the gateway): idempotent methods only (GET, HEAD, OPTIONS, PUT, DELETE — RFC 9110 §9.2.2).
/// - **The gateway refused it before forwarding** (its own problem+json: `store_unavailable`,
///   `nonce_store_full`, `upstream_unreachable`, `rate_limited`, `connection_limit`): any method,
///   after `Retry-After` when the gateway gave one.
public struct RequestRetry: Sendable {
    /// Tries in all, the first included; 1 turns retries off.
    public var attempts: Int
    /// The backoff's first step, doubling after each failure, each wait drawn at random below it.
    public var initialDelay: Duration
    /// The longest wait; a `Retry-After` beyond it is not waited for (the answer is returned).
    public var maximumDelay: Duration

    public init(attempts: Int = 3, initialDelay: Duration = .milliseconds(250), maximumDelay: Duration = .seconds(8)) {
        self.attempts = max(1, attempts)
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// No retries.
    public static var none: RequestRetry { RequestRetry(attempts: 1) }

    /// The gateway's reasons for refusing a request it did not forward, and that may lift.
    static let refusedBeforeForwarding: Set<SignetError.Code> = [
        .storeUnavailable, .nonceStoreFull, .upstreamUnreachable, .rateLimited, .connectionLimit,
    ]

    static let idempotentMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]

    /// The wait before try `failures + 1`: full jitter below `initialDelay · 2^(failures-1)`,
    /// capped at ``maximumDelay``.
    func delay(afterFailures failures: Int, random: Double = Double.random(in: 0...1)) -> Duration {
        let ceiling = min(maximumDelay.seconds, initialDelay.seconds * pow(2, Double(max(0, failures - 1))))
        return .milliseconds(Int64((ceiling * random * 1000).rounded()))
    }

    /// How long to wait before sending `method` again after `response`, or `nil` not to.
    func wait(after response: ClientResponse, method: String, failures: Int) -> Duration? {
        guard failures < attempts else { return nil }
        let refusedBeforeForwarding = response.gatewayRefusal.map(Self.refusedBeforeForwarding.contains) ?? false
        let retryable =
            refusedBeforeForwarding || (response.status == 503 && Self.idempotentMethods.contains(method.uppercased()))
        guard retryable else { return nil }
        guard let after = response.fields["retry-after"].flatMap(Self.retryAfterSeconds) else {
            return delay(afterFailures: failures)
        }
        let wait = Duration.seconds(after)
        return wait <= maximumDelay ? wait : nil
    }

    /// How long to wait before sending `method` again after a transport failure, or `nil` not to.
    func wait(afterFailure failure: ClientTransportFailure, method: String, failures: Int) -> Duration? {
        guard failures < attempts else { return nil }
        guard !failure.mayHaveBeenSent || Self.idempotentMethods.contains(method.uppercased()) else { return nil }
        return delay(afterFailures: failures)
    }

    /// `Retry-After` as delay-seconds (an HTTP-date is not worth a phone's clock).
    static func retryAfterSeconds(_ value: String) -> Int? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 9, trimmed.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(trimmed)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
