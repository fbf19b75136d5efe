// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import NIOHTTP1
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// `signet ohttp` against a gateway over a socket.
@Suite(.awaitsCleanups) struct ObliviousCommandLineTests {
    /// `signet keygen --alg hpke-x25519`, `signet request --ohttp-keys` (also with a stale key
    /// configuration, refreshed once) and `signet ohttp open`, as processes.
    @Test func theCommandLineSendsEncryptedAndOpensCapturedRequests() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        let keygen = try await SignetProcess.signet(["keygen", "--alg", "hpke-x25519", "--ohttp-key-id", "4", "--out", folder.path + "/keys"])
        try #require(keygen.status == 0, "\(keygen.stderr)")
        let keyFile = folder.path + "/keys/ohttp-4.key.pem"
        let stale = try await SignetProcess.signet(["keygen", "--alg", "hpke-p256", "--ohttp-key-id", "9", "--out", folder.path + "/stale"])
        try #require(stale.status == 0, "\(stale.stderr)")
        #expect(try await SignetProcess.signet(["keygen", "--alg", "hpke-x25519", "--out", folder.path]).status == 64, "--ohttp-key-id is required")

        let harness = try await GatewayHarness.start { configuration in
            configuration.ohttp = .init(keys: [.init(keyId: 4, keyFile: keyFile)])
        }
        Cleanup.after { try await harness.stop() }
        try Data(Base64.encode(GatewayHarness.bankSecret).utf8).write(to: folder.appendingPathComponent("bank.b64"))
        try Data(harness.gatewayKey.verificationKey.pemRepresentation!.utf8).write(to: folder.appendingPathComponent("gateway.pub.pem"))
        for keys in [folder.path + "/keys/ohttp-4.ohttp-keys", folder.path + "/stale/ohttp-9.ohttp-keys"] {
            let arguments = [
                "request", "--ohttp-keys", keys, "-i", "-H", "Content-Type: application/json",
                "-d", #"{"name":"Cli","score":3}"#, "--key", folder.path + "/bank.b64", "--keyid", "bank-v1",
                "--alg", "hmac-sha256", "--response-key", folder.path + "/gateway.pub.pem", harness.base + "/scores",
            ]
            let sent = try await SignetProcess.signet(arguments)
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.stdout.hasPrefix("HTTP/1.1 201"), "\(sent.stdout)")
            #expect(sent.stdout.contains("# response signature by gateway verified"))
        }
        #expect(harness.backend.allEntries.map(\.name) == ["Cli", "Cli"])

        // A captured request, opened for debugging; the wrong key says so.
        let configuration = try #require(
            try OHTTPKeyConfiguration.decodeList(Array(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/keys/ohttp-4.ohttp-keys")))).first
        )
        let message = BinaryHTTPMessage(
            head: .request(method: "POST", scheme: "https", authority: "api.example.com", path: "/v1/x?y=1"),
            fields: [.init("content-type", "text/plain")],
            content: Array("captured".utf8)
        )
        let captured = folder.appendingPathComponent("captured.bin")
        try Data(try ObliviousClientRequest(encapsulating: message.encoded(), to: configuration).bytes).write(to: captured)
        let opened = try await SignetProcess.signet(["ohttp", "open", "--key", keyFile, captured.path])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == "POST https://api.example.com/v1/x?y=1\ncontent-type: text/plain\n\ncaptured")
        let wrong = try await SignetProcess.signet(["ohttp", "open", "--key", folder.path + "/stale/ohttp-9.key.pem", captured.path])
        #expect(wrong.status == 1 && wrong.stderr.contains("ohttp_key_unknown"), "\(wrong.stderr)")
    }
}
