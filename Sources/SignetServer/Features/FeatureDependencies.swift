// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import SignetMiddleware
import SignetStore

/// What the root builds once and every feature may use: the store, the metrics, the clock, the
/// admin credential, the request verifier with its device-key cache, the served certificate, and
/// what the operator surface reports (readiness, the root's own keys).
struct FeatureDependencies: Sendable {
    let configuration: GatewayConfiguration
    let store: any SignetStorage
    let metrics: SignetMetrics
    let exposition: PrometheusExposition
    let logger: Logger
    let clock: @Sendable () -> Date
    let admin: AdminAccess
    let keyCache: DeviceKeyCache
    let requestVerifier: SignetRequestVerifier
    /// The apps' listener's certificate, when it speaks HTTPS.
    let tls: GatewayTLS?
    /// The store and the upstream, as `/readyz` checks them.
    let readiness: Readiness
    /// The keys the root holds itself (the response signing key, the TLS certificate), for the
    /// console's inventory.
    let ownKeys: [GatewayKeyInventory.Entry]
}
