// SPDX-License-Identifier: Apache-2.0
import SignetMiddleware

/// The `open` access mode: requests pass unverified, counted as such.
struct OpenAccessFeature: GatewayFeature {
    static let accessModes = [AccessMode(name: "open", notMonitorable: "it refuses nothing")]

    let metrics: SignetMetrics

    init?(_ context: FeatureContext) throws {
        metrics = context.dependencies.metrics
    }

    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        OpenRouteMiddleware<SignetRequestContext>(metrics: metrics)
    }
}
