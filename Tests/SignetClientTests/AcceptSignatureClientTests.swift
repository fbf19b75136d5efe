// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// The SDK reads `Accept-Signature` (RFC 9421 §5.1): a gateway whose policy asks for more than the
/// SDK covers by default refuses the first signature with what it wants, the SDK signs once more
/// as asked, and from then on signs so from the start.
@Suite(.awaitsCleanups) struct AcceptSignatureClientTests {
    @Test func theClientSignsWhatTheGatewayAsks() async throws {
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) { $0.policy.coveredFields = ["x-app-version"] }
        Cleanup.after { try await harness.stop() }
        let client = try SignetClient(configuration: try await harness.client().configuration)
        try await client.register(using: SoftwareKeyProvider())
        func post(_ name: String) async throws -> ClientResponse {
            try await client.send(
                "POST",
                harness.base + "/scores",
                fields: [("X-App-Version", "4.2"), ("Content-Type", "application/json")],
                body: Array(#"{"name":"\#(name)","score":7}"#.utf8)
            )
        }
        let first = try await post("Enkidu")
        #expect(first.status == 201, "\(first.status) \(first.text)")
        let second = try await post("Shamhat")
        #expect(second.status == 201, "\(second.status) \(second.text)")
        // One refusal between the two: the second covered the field on its first try.
        let metrics = try await client.send(
            "GET",
            harness.base + "/metrics",
            fields: [("Authorization", "Bearer \(GatewayHarness.adminToken)")],
            sign: false
        ).text
        #expect(metrics.contains(#"signet_requests_total{outcome="rejected",reason="component_not_covered"} 1"#), "\(metrics.split(separator: "\n").filter { $0.contains("rejected") })")
    }
}
