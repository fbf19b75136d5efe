// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetMiddleware

/// Pin failure reports: taken from apps, listed for operators.
struct PinReportsFeature: GatewayFeature {
    let dependencies: FeatureDependencies

    static let endpoints = ["/signet/v1/pin-reports"]
    /// The reports' list.
    static let operatorPaths: [(methods: [HTTPRequest.Method], path: String)] = [([.get], "/signet/v1/pin-reports")]

    init?(_ context: FeatureContext) throws {
        dependencies = context.dependencies
    }

    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        let d = dependencies
        PinReportRoutes<SignetRequestContext>(
            store: d.store,
            limiter: SharedSourceLimiter("pin-reports", limit: d.configuration.pinReportsPerSourcePerMinute, store: d.store),
            admin: d.admin,
            metrics: d.metrics,
            maximumGroups: d.configuration.maxPinReportGroups,
            clock: d.clock
        ).add(to: router, surfaces: listener.surfaces)
    }
}
