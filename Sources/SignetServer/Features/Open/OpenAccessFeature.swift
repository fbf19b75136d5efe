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

    /// Nothing to judge: the event-loop data plane forwards an open route's requests, counted as
    /// ``OpenRouteMiddleware`` counts them.
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        .open { [metrics] in metrics.record(outcome: "open", reason: nil) }
    }
}
