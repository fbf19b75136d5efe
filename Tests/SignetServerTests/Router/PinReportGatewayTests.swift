// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// Pin reports at the gateway: what a flood of them can do to the store.
@Suite(.awaitsCleanups) struct PinReportGatewayTests {
    /// Issue 25: 300 reports of 64 KiB from 10 sources added 21 MiB in half a second, kept 30 days.
    /// Identical reports now add to a count, a group keeps at most 8 KiB, and the groups are bounded.
    @Test func aFloodOfPinReportsGrowsACountNotTheStore() async throws {
        let upstream = try await MisbehavingUpstream.start(.echo)
        let harness = try await GatewayHarness.start(store: .sqlite, transport: .router) {
            $0.upstream = "http://127.0.0.1:\(upstream.port)"
            $0.trustedProxies = ["127.0.0.1/32"]
            $0.maxPinReportGroups = 20
        }
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        func report(host: String, padding: Int) -> [UInt8] {
            let object: [String: Any] = [
                "hostname": host, "known-pins": ["pin-sha256=\"AAAA\""],
                "served-certificate-chain": [String(repeating: "A", count: padding)], "validation-result": 1,
            ]
            return Array(try! JSONSerialization.data(withJSONObject: object))
        }
        func post(_ body: [UInt8], from source: String) async throws -> Int {
            try await GatewayHarness.send(
                method: "POST",
                url: harness.base + "/signet/v1/pin-reports",
                headers: [("Content-Type", "application/json"), ("X-Forwarded-For", source)],
                body: body
            ).status
        }
        let big = report(host: "api.example.com", padding: 60_000)
        var stored = 0
        for index in 0..<300 { stored += try await post(big, from: "203.0.113.\(index % 10)") == 201 ? 1 : 0 }
        #expect(stored == 300, "each of the 10 sources is within its 30 a minute")
        // Distinct reports past the bound: the least recently seen groups go.
        for index in 0..<40 {
            #expect(try await post(report(host: "host\(index).example.com", padding: 100), from: "198.51.100.\(index)") == 201)
        }
        let listed = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/signet/v1/pin-reports",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        let groups = try #require(listed.json["reports"] as? [[String: Any]])
        #expect(groups.count == 20)
        #expect(groups.first?["hostname"] as? String == "host39.example.com")
        // The 300 identical reports are one group with their count: evidence several reports agree
        // on outlives the spray of one-off ones.
        let repeated = try #require(groups.first { $0["hostname"] as? String == "api.example.com" })
        #expect(repeated["count"] as? Int == 300 && repeated["reason"] as? String == "no-matching-pin")
        #expect(try await harness.store.pinReportGroupCount() == 20)
        // What the store holds: 20 groups of at most 8 KiB each, however large the reports were
        // (300 of them stored whole would be 18 MB). The write-ahead log is bounded apart: SQLite
        // checkpoints it after the commit that passes 1,000 frames (a page and 24 bytes each), however
        // many writes there were (one transaction here writes a few pages).
        let file = harness.folder.appendingPathComponent("signet.sqlite").path
        let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
        let log = (try? FileManager.default.attributesOfItem(atPath: file + "-wal")[.size] as? Int) ?? 0
        #expect(size < 1 << 20, "the store is \(size) bytes")
        #expect(log <= (1_000 + 16) * (4_096 + 24) + 32, "the write-ahead log is \(log) bytes")
    }


    /// One source sends at most `pinReportsPerSourcePerMinute` reports a minute (then `429
    /// rate_limited` with `Retry-After`), each at most 64 KiB and a report at all; reading them
    /// takes the admin token.
    @Test func reportsAreBoundedPerSourceAndInSizeAndReadOnlyByOperators() async throws {
        let clock = ManualClock()
        let harness = try await GatewayHarness.start(store: .memory, transport: .router, clock: clock) {
            $0.pinReportsPerSourcePerMinute = 3
        }
        Cleanup.after { try await harness.stop() }
        func post(_ body: [UInt8]) async throws -> GatewayHarness.Answer {
            try await GatewayHarness.send(
                method: "POST",
                url: harness.base + "/signet/v1/pin-reports",
                headers: [("Content-Type", "application/json")],
                body: body
            )
        }
        let report = Array(try JSONSerialization.data(withJSONObject: [
            "hostname": "api.example.com", "known-pins": ["pin-sha256=\"AAAA\""], "served-certificate-chain": ["AAAA"],
            "validation-result": 1,
        ]))
        let large = Array(try JSONSerialization.data(withJSONObject: [
            "hostname": "api.example.com", "served-certificate-chain": [String(repeating: "A", count: 66_000)],
        ]))
        #expect(try await post(large).reason == "body_too_large")
        #expect(try await post(Array("not a report".utf8)).reason == "malformed_message")
        // The refusal of a body past the bound came before the route, and counted nothing; the
        // malformed one counted, as any attempt does.
        #expect(try await post(report).status == 201)
        #expect(try await post(report).status == 201)
        let limited = try await post(report)
        #expect(limited.status == 429 && limited.reason == "rate_limited", "\(limited.status) \(limited.text)")
        #expect(Int(limited.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
        // A minute later the source may send again.
        clock.advance(by: 61)
        #expect(try await post(report).status == 201)
        let anonymous = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/pin-reports")
        #expect(anonymous.status == 401 && anonymous.reason == "admin_unauthorized")
        let listed = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/signet/v1/pin-reports",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect((listed.json["reports"] as? [[String: Any]])?.first?["count"] as? Int == 3, "\(listed.text)")
    }

}
