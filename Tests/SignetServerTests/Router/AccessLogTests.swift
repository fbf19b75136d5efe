// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import SignetCore
import SignetMiddleware
import SignetServer
import SignetTestSupport
import Synchronization
import Testing

/// One access log line per request — accepted, refused, unrouted — with who, where and how long,
/// and nothing secret; and the metrics an operator asks for, as Prometheus text.
@Suite(.awaitsCleanups) struct AccessLogTests {
    @Test func everyRequestLogsOneLineWithItsFieldsAndNoSecret() async throws {
        let logs = CapturedLogs()
        let harness = try await GatewayHarness.start(logger: logs.logger(), transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        #expect(try await GatewayHarness.send(signed).status == 201)
        #expect(try await GatewayHarness.send(signed).reason == "nonce_replayed")
        #expect(try await GatewayHarness.send(try harness.scorePost()).reason == "signature_missing")
        let query = LegacyQueryHMAC(key: GatewayHarness.legacySecret).query(for: "{\"name\":\"Enkidu\",\"score\":90}")
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/legacy/score?" + query).status == 201)
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/no-such-\(Nonce.random())").status == 404)

        let lines = logs.all.filter { $0.message == "request" }
        // The challenge and the registration, then the five above.
        #expect(lines.count == 7, "\(lines.map(\.metadata))")
        let accepted = try #require(lines.first { $0.metadata["status"] == "201" && $0.metadata["route"] == "/" })
        #expect(accepted.metadata["method"] == "POST")
        #expect(accepted.metadata["keyid"] == device.keyID && accepted.metadata["device"] == device.deviceID)
        #expect(accepted.metadata["trust"] == "device-key" && accepted.metadata["client"] == "127.0.0.1")
        #expect(accepted.metadata["upstream_status"] == "201" && accepted.metadata["reason"] == nil)
        let total = try #require(accepted.metadata["total_ms"].flatMap(Double.init))
        let upstream = try #require(accepted.metadata["upstream_ms"].flatMap(Double.init))
        #expect(upstream > 0 && upstream <= total)
        let replayed = try #require(lines.first { $0.metadata["reason"] == "nonce_replayed" })
        #expect(replayed.metadata["status"] == "401" && replayed.metadata["upstream_status"] == nil)
        #expect(lines.contains { $0.metadata["reason"] == "signature_missing" && $0.metadata["route"] == "/" })
        #expect(lines.contains { $0.metadata["route"] == "/legacy/score" && $0.metadata["keyid"] == "highscore-legacy" })
        #expect(lines.contains { $0.metadata["route"] == "(none)" && $0.metadata["reason"] == "not_found" })
        #expect(lines.contains { $0.metadata["route"] == "/signet/v1/devices" && $0.metadata["status"] == "201" })

        // Nothing a request carried that could be replayed or read: signature, nonce, body, query MAC.
        let secrets = [
            try #require(signed.fields["signature"]), try #require(signed.fields["signature-input"]),
            "Gilgamesh", "Enkidu", String(query.split(separator: "&").last { $0.hasPrefix("hmac=") }?.dropFirst(5) ?? "hmac"),
        ]
        for line in logs.all {
            let text = line.message + " " + line.metadata.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            for secret in secrets { #expect(!text.contains(secret), "\(secret) in \(text)") }
        }
    }

    /// The route is read from the path as it was routed: a path refused before routing is
    /// `(refused)`, an escaped spelling of a route is that route.
    @Test func theRouteIsThePathAsRouted() async throws {
        let logs = CapturedLogs()
        let harness = try await GatewayHarness.start(logger: logs.logger(), transport: .router)
        Cleanup.after { try await harness.stop() }
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/scores/%74op").status == 200)
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/a/%2F/b").reason == "path_ambiguous")
        let lines = logs.all.filter { $0.message == "request" }.map(\.metadata)
        #expect(lines.contains { $0["route"] == "/scores/top" && $0["status"] == "200" }, "\(lines)")
        #expect(lines.contains { $0["route"] == "(refused)" && $0["reason"] == "path_ambiguous" }, "\(lines)")
    }

    @Test func theMetricsAnswerAnOperatorsQuestions() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.instance = "gw-a.example:1" }
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        #expect(try await GatewayHarness.send(signed).status == 201)
        #expect(try await GatewayHarness.send(signed).reason == "nonce_replayed")
        for _ in 0..<3 {
            _ = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/no-such-\(Nonce.random())")
        }
        let text = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/metrics",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        ).text
        let lines = text.split(separator: "\n").map(String.init)
        func value(_ name: String, _ labels: [String: String]) -> Double? {
            lines.first { line in
                line.hasPrefix(name + "{") && labels.allSatisfy { line.contains("\($0.key)=\"\($0.value)\"") }
            }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        #expect(value("signet_http_requests_total", ["route": "/", "code": "201", "reason": "none"]) == 1, "\(text)")
        #expect(value("signet_http_requests_total", ["route": "/", "code": "401", "reason": "nonce_replayed"]) == 1)
        #expect(value("signet_http_requests_total", ["route": "(none)", "code": "404"]) == 3, "made-up paths share one label")
        #expect(value("signet_http_requests_total", ["route": "/signet/v1/devices", "code": "201"]) == 1)
        #expect(value("signet_upstream_responses_total", ["code": "201"]) == 1)
        #expect(lines.contains { $0.hasPrefix("signet_upstream_response_duration_seconds_count") && $0.hasSuffix(" 1") })
        #expect(lines.contains { $0.hasPrefix("signet_http_request_duration_seconds_bucket{") && $0.contains("route=\"/\"") })
        #expect(value("signet_nonce_claims_total", ["result": "claimed"]) == 1)
        #expect(value("signet_nonce_claims_total", ["result": "replayed"]) == 1)
        #expect(lines.contains { $0.hasPrefix("signet_store_operation_duration_seconds_count{operation=\"nonce_claim\"} 2") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("signet_store_operation_duration_seconds_count{operation=\"device_lookup\"}") })
        #expect(value("signet_requests_total", ["outcome": "registered"]) == 1)
        #expect(!text.contains(device.keyID), "no key id becomes a label")
        // Every family says what it counts; the release, the configuration and the process are there.
        let families = lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        for family in families {
            #expect(lines.contains { $0.hasPrefix("# HELP \(family) ") && $0.count > "# HELP \(family) ".count + 10 }, "\(family)")
        }
        #expect(value("signet_build_info", ["version": SignetVersion.current, "instance_name": "gw-a.example:1"]) == 1)
        #expect(lines.contains { $0.wholeMatch(of: /signet_configuration_info\{hash="[0-9a-f]{16}"\} 1/) != nil }, "\(text)")
        #expect((value("process_resident_memory_bytes", [:]) ?? lines.first { $0.hasPrefix("process_resident_memory_bytes ") }.flatMap { Double($0.split(separator: " ")[1]) } ?? 0) > 1_000_000)
        #expect(lines.contains { $0.hasPrefix("process_open_fds ") } && lines.contains { $0.hasPrefix("process_start_time_seconds ") })
    }

    /// A reload is counted, and the configuration's hash follows the one in force: an instance left
    /// on an old configuration stands out.
    @Test func aReloadIsCountedAndTheConfigurationHashFollowsIt() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        func metrics() async throws -> String {
            try await GatewayHarness.send(
                method: "GET",
                url: harness.base + "/metrics",
                headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
            ).text
        }
        func hash(_ text: String) -> String? {
            text.firstMatch(of: /signet_configuration_info\{hash="([0-9a-f]+)"\}/).map { String($0.1) }
        }
        let before = try await metrics()
        // Both series from the start, so that the first refusal shows in an `increase(…)`.
        #expect(before.contains(#"signet_configuration_reloads_total{result="refused"} 0"#), "\(before)")
        let reloader = harness.gateways[0].reloader
        var next = try #require(reloader.configuration)
        next.maxBodyBytes += 1
        try reloader.reload(to: next)
        var refused = next
        refused.listen.port = 1
        #expect(throws: ConfigurationError.self) { try reloader.reload(to: refused) }
        // A configuration that cannot be read at all (this harness's reloader has none to read).
        #expect(throws: ConfigurationError.self) { try reloader.reload() }
        let after = try await metrics()
        #expect(hash(before) != nil && hash(after) != nil && hash(before) != hash(after))
        #expect(after.contains(#"signet_configuration_reloads_total{result="applied"} 1"#), "\(after)")
        #expect(after.contains(#"signet_configuration_reloads_total{result="refused"} 2"#))
    }

    /// `--log-format json`: one JSON object per line, the metadata keys as fields.
    @Test func theJSONHandlerWritesOneObjectPerLine() throws {
        let written = Mutex<[String]>([])
        var logger = Logger(label: "signet") { label in JSONLogHandler(label: label) { line in written.withLock { $0.append(line) } } }
        logger.logLevel = .info
        logger.info("request", metadata: ["route": "/scores", "status": "201"])
        logger.debug("not at info")
        let lines = written.withLock { $0 }
        #expect(lines.count == 1 && lines[0].hasSuffix("}\n") && lines[0].filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: String])
        #expect(object["message"] == "request" && object["level"] == "info" && object["label"] == "signet")
        #expect(object["route"] == "/scores" && object["status"] == "201")
        let time = try #require(object["time"])
        #expect(time.hasSuffix("Z") && (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(time)) != nil, "\(time)")
    }

    /// `--log-format text`: metadata set on a logger (Hummingbird sets a request id on every
    /// request's) is handed to swift-log's own handler only when a line is written, and the line
    /// carries it, with the event's own, as that handler writes them.
    @Test func theTextHandlerGivesMetadataOnlyToLinesWritten() throws {
        let seen = RecordingHandler.Lines()
        var logger = Logger(label: "signet") { _ in DeferredMetadataLogHandler(RecordingHandler(seen: seen)) }
        logger.logLevel = .info
        logger[metadataKey: "hb.request.id"] = "7"
        logger[metadataKey: "route"] = "/scores"
        #expect(seen.lines.withLock { $0.isEmpty }, "nothing handed over before a line is written")
        logger.info("request", metadata: ["status": "201"])
        logger.debug("not at info")
        #expect(seen.lines.withLock { $0 } == [["hb.request.id": "7", "route": "/scores", "status": "201"]])
        #expect(logger[metadataKey: "route"] == "/scores")
    }
}

/// Records the metadata it holds, merged with the event's, for each line it is asked to write.
private struct RecordingHandler: LogHandler {
    final class Lines: Sendable {
        let lines = Mutex<[Logger.Metadata]>([])
    }
    let seen: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        seen.lines.withLock { $0.append(merged) }
    }
}
