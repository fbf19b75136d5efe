// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import SwiftASN1
import X509
import Testing

/// `signet request` (the CLI, through the SDK) follows `Accept-Signature`: a gateway whose policy
/// asks every signed request to cover `x-app-version` refuses the first signature with what it
/// wants, and the CLI's second one is accepted.
@Suite(.awaitsCleanups) struct AcceptSignatureLiveTests {
    @Test func signetRequestSignsWhatTheGatewayAsks() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        let tls = GatewayConfiguration.TLS(certificateFile: path("tls.pem"), keyFile: path("tls.key"), development: true)
        let harness = try await GatewayHarness.start(tls: tls) { $0.policy.coveredFields = ["x-app-version"] }
        Cleanup.after {
            try await harness.stop()
            try? FileManager.default.removeItem(at: folder)
        }
        try Data(try harness.gateway.tls!.chain.last!.serializeAsPEM().pemString.utf8).write(to: URL(fileURLWithPath: path("ca.pem")))
        try Data(Base64.encode(GatewayHarness.bankSecret).utf8).write(to: URL(fileURLWithPath: path("bank.b64")))
        let sent = try await SignetProcess.signet([
            "request", harness.base + "/scores", "--cacert", path("ca.pem"), "-i",
            "--key", path("bank.b64"), "--keyid", "bank-v1",
            "-H", "Content-Type: application/json", "-H", "X-App-Version: 7",
            "-d", #"{"name":"Ur-Nammu","score":3}"#,
        ])
        #expect(sent.status == 0 && sent.stdout.hasPrefix("HTTP/1.1 201"), "\(sent.status) \(sent.stdout) \(sent.stderr)")
        // Without the field the policy asks for, no signature can cover it: refused, and told why.
        let bare = try await SignetProcess.signet([
            "request", harness.base + "/scores", "--cacert", path("ca.pem"), "-i",
            "--key", path("bank.b64"), "--keyid", "bank-v1",
            "-H", "Content-Type: application/json", "-d", #"{"name":"Ur-Nammu","score":3}"#,
        ])
        #expect(bare.stdout.hasPrefix("HTTP/1.1 401") && bare.stdout.contains("Accept-Signature: sig1=("), "\(bare.stdout)")
        #expect(bare.stdout.contains("component_not_covered"), "\(bare.stdout)")
    }
}
