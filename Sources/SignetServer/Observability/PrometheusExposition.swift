// SPDX-License-Identifier: Apache-2.0
import Prometheus
import SignetMiddleware

/// The gateway's `/metrics`: ``SignetMetrics`` recorded into a Prometheus registry of this gateway's
/// own (no process-wide bootstrap), served in the Prometheus text format.
struct PrometheusExposition: Sendable {
    let registry = PrometheusCollectorRegistry()
    let metrics: SignetMetrics

    init(activity: ActivityRecorder? = nil) {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30),
        ]
        metrics = SignetMetrics(factory: factory, activity: activity)
    }

    /// The exposition text.
    func text() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}
