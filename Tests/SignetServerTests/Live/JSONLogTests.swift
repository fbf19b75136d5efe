// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import SignetServer
import SignetTestSupport
import Testing

/// `signet serve --log-format json`, its standard output and error merged as a container's are:
/// every line is a JSON object (no text banner beside them), numbers are numbers, and each request
/// line names its `X-Request-Id` — the client's, or one the gateway made and sent upstream — and
/// the trace id of its `traceparent`.
@Suite(.awaitsCleanups) struct JSONLogTests {
    /// The JSON objects among `lines`.
    static func objects(_ lines: [String]) -> [[String: Any]] {
        lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func everyLineIsJSONWithNumbersAndEachRequestNamesItsIDs() async throws {
        var quiet = Logger(label: "signet.test")
        quiet.logLevel = .critical
        let (_, backend) = try await GatewayHarness.startBackend(logger: quiet)
        Cleanup.after { await backend.stop() }
        let folder = try SignetProcess.temporaryDirectory()
        Cleanup.after { try? FileManager.default.removeItem(at: folder) }
        let configuration: [String: Any] = [
            "upstream": "http://127.0.0.1:\(backend.port)", "listen": ["host": "127.0.0.1", "port": 0],
            "store": ["memory": true], "routes": [["prefix": "/echo", "access": "open"]],
        ]
        try JSONSerialization.data(withJSONObject: configuration).write(to: folder.appendingPathComponent("signet.json"))
        let serve = try RunningProcess(
            SignetProcess.signetPath,
            ["serve", "--config", "signet.json", "--log-format", "json", "--log-level", "info"],
            in: folder,
            mergingErrors: true
        )
        Cleanup.after { serve.kill() }
        let isListening: ([String: Any]) -> Bool = { $0["message"] as? String == "signet gateway listening" }
        _ = try await serve.wait { Self.objects($0).contains(where: isListening) }
        let started = Self.objects(serve.lines)
        let listening = try #require(started.first(where: isListening))
        let address = try #require(listening["address"] as? String)
        let port = try #require(Int(address.split(separator: ":").last ?? ""))
        #expect((listening["routes"] as? [String])?.isEmpty == false)

        let base = "http://127.0.0.1:\(port)"
        let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let given = try await GatewayHarness.send(
            method: "GET",
            url: base + "/echo/headers",
            headers: [("X-Request-Id", "balancer-7f3a"), ("traceparent", traceparent)]
        )
        #expect((given.json["x-request-id"] as? String) == "balancer-7f3a", "\(given.text)")
        let made = try await GatewayHarness.send(method: "GET", url: base + "/echo/headers")
        let madeID = try #require(made.json["x-request-id"] as? String, "the upstream receives the id the gateway made: \(made.text)")
        // A version 4 UUID in lowercase, as the docs say.
        #expect(madeID.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil, "\(madeID)")

        let isRequest: ([String: Any]) -> Bool = { $0["message"] as? String == "request" }
        _ = try await serve.wait { Self.objects($0).filter(isRequest).count >= 2 }
        let requests = Self.objects(serve.lines).filter(isRequest)
        #expect(requests.count == 2)
        #expect(requests.first?["request_id"] as? String == "balancer-7f3a")
        #expect(requests.first?["trace_id"] as? String == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(requests.last?["request_id"] as? String == madeID && requests.last?["trace_id"] == nil)
        for line in requests {
            #expect(line["status"] is Int && line["status"] as? Int == 200, "\(line)")
            #expect(line["total_ms"] is Double && line["upstream_ms"] is Double && line["upstream_status"] as? Int == 200, "\(line)")
        }
        // One stream, one format: nothing but JSON objects.
        let strays = serve.lines.filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) == nil }
        #expect(strays.isEmpty, "\(strays)")
    }
}
