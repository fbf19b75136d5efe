// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// The highest App Attest risk metric a device may have (Apple's count of keys attested for the app
/// on that device lately), and what happens above it. Checked with the route's requirement, before
/// any cryptography and before a nonce is claimed.
public struct RiskLimit: Sendable, Hashable {
    public enum Action: String, Sendable, Hashable, Codable {
        /// Refuse with `risk_metric_exceeded` (403).
        case refuse
        /// Let the request through; the upstream sees `Signet-Risk-Metric` and decides.
        case flag
    }

    public var maximum: Int
    public var action: Action

    public init(maximum: Int, action: Action = .refuse) {
        self.maximum = maximum
        self.action = action
    }

    /// Throws for a device above the limit when the action is `refuse`; a device whose metric is not
    /// known yet (no exchange so far) passes.
    public func check(_ owner: KeyOwner?) throws {
        guard action == .refuse, let metric = owner?.riskMetric, metric > maximum else { return }
        // Checked before the signature: the answer must not tell a stranger the device's metric.
        throw SignetError(.riskMetricExceeded, "the device's App Attest risk metric is above the limit")
    }
}
