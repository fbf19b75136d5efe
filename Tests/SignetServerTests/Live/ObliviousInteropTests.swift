// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// Oblivious HTTP against an implementation Signet did not write: `Tests/Interop/ohttp_peer.py`,
/// with pyhpke's HPKE, its own Binary HTTP and OHTTP framing, and pyauth's request signing.
@Suite(.awaitsCleanups, .enabled(if: PythonPeer.available("pyhpke, http_message_signatures, requests")))
struct ObliviousInteropTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// A Python client signs (HMAC, pyauth), encapsulates (pyhpke) and opens the gateway's answer.
    @Test func aPythonClientSendsASignedRequestThroughTheGateway() async throws {
        let harness = try await ObliviousGatewayTests.start(transport: .sockets)
        Cleanup.after { try await harness.stop() }
        let answer = try Self.json(
            try await PythonPeer.run(
                "ohttp_peer.py",
                ["client", harness.base, "/scores", "bank-v1", Base64.encode(GatewayHarness.bankSecret), #"{"name":"Py","score":7}"#]
            )
        )
        #expect(answer["status"] as? Int == 201, "\(answer)")
        let fields = try #require(answer["fields"] as? [[String]])
        #expect(fields.contains { $0[0] == "signature" }, "the gateway's response signature travels inside")
        #expect(harness.backend.allEntries.map(\.name) == ["Py"])
    }

    /// Signet's client side against a Python gateway: its key configuration in, its answer out.
    @Test func signetEncapsulatesToAPythonGateway() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        _ = try await PythonPeer.run("ohttp_peer.py", ["keygen", folder.path])
        let configuration = try OHTTPKeyConfiguration(decoding: Array(try Data(contentsOf: folder.appendingPathComponent("config.bin"))))
        for suite in OHTTPAlgorithms.allSuites {
            let request = BinaryHTTPMessage(
                head: .request(method: "POST", scheme: "https", authority: "api.example.com", path: "/v1/echo"),
                fields: [.init("content-type", "text/plain")],
                content: Array("hello \(suite.aead)".utf8)
            )
            let sent = try ObliviousClientRequest(encapsulating: request.encoded(), to: configuration, suite: suite)
            let requestFile = folder.appendingPathComponent("request.bin")
            let responseFile = folder.appendingPathComponent("response.bin")
            try Data(sent.bytes).write(to: requestFile)
            let seen = try Self.json(try await PythonPeer.run("ohttp_peer.py", ["open", folder.path, requestFile.path, responseFile.path]))
            #expect(seen["method"] as? String == "POST" && seen["path"] as? String == "/v1/echo")
            #expect(seen["body"] as? String == "hello \(suite.aead)")
            let response = try BinaryHTTPMessage(decoding: try sent.openResponse(Array(try Data(contentsOf: responseFile))))
            #expect(response.head == .response(status: 200))
            #expect(String(decoding: response.content, as: UTF8.self) == "hello \(suite.aead)")
        }
    }
}
