// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import SignetMiddleware
import SignetStore

/// What the root builds once and every feature may use: the store, the metrics, the clock, the
/// admin credential, and the request verifier with its device-key cache.
struct FeatureDependencies: Sendable {
    let configuration: GatewayConfiguration
    let store: any SignetStorage
    let metrics: SignetMetrics
    let logger: Logger
    let clock: @Sendable () -> Date
    let admin: AdminAccess
    let keyCache: DeviceKeyCache
    let requestVerifier: SignetRequestVerifier
}
