// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Prometheus
import SignetMiddleware
import Synchronization

/// The gateway's `/metrics`: ``SignetMetrics`` recorded into a Prometheus registry of this gateway's
/// own (no process-wide bootstrap), served in the Prometheus text format.
struct PrometheusExposition: Sendable {
    let registry = PrometheusCollectorRegistry()
    let metrics: SignetMetrics
    /// A hash of the configuration in force (``configurationLoaded(_:)``); kept by a reload.
    private let configurationHash = SharedHash()
    /// This instance's name (`signet_build_info`'s `instance_name` label; a valid name needs no escaping).
    private let instance: String

    final class SharedHash: Sendable {
        let value = Mutex("")
    }

    init(activity: ActivityRecorder? = nil) {
        instance = activity?.instance ?? ""
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30),
        ]
        metrics = SignetMetrics(factory: factory, activity: activity)
    }

    /// Says which configuration is in force (`signet_configuration_info`): the first 16 hex digits
    /// of an HMAC-SHA256 of its JSON (keys sorted) under its admin token — `/metrics` is served only
    /// with one — so that whoever reads the metrics cannot test guesses at a secret in it; instances
    /// on the same configuration share the token and show the same hash (their `instance` names
    /// left out).
    func configurationLoaded(_ configuration: GatewayConfiguration) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var shared = configuration
        shared.instance = nil
        let json = (try? encoder.encode(shared)) ?? Data()
        let key = SymmetricKey(data: Data((configuration.adminToken ?? "").utf8))
        let hash = HMAC<SHA256>.authenticationCode(for: json, using: key).prefix(8).map { String(format: "%02x", $0) }.joined()
        configurationHash.value.withLock { $0 = hash }
    }

    /// The exposition text: the recorded metrics, the release and configuration in force and the
    /// process's, each family with its `# HELP`.
    func text() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        let hash = configurationHash.value.withLock { $0 }
        let own = """
            # TYPE signet_build_info gauge
            signet_build_info{version="\(SignetVersion.current)",instance_name="\(instance)"} 1
            # TYPE signet_configuration_info gauge
            signet_configuration_info{hash="\(hash)"} 1

            """
        return MetricHelp.annotate(String(decoding: buffer, as: UTF8.self) + own + ProcessMetrics.exposition())
    }
}
