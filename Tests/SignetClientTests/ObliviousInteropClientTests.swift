// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetTestSupport
import Testing

/// `SignetClient.sendOblivious` against an Oblivious HTTP gateway Signet did not write
/// (`Tests/Interop/ohttp_peer.py serve`: pyhpke, its own Binary HTTP and framing).
@Suite(.enabled(if: PythonPeer.available("pyhpke, requests")))
struct ObliviousInteropClientTests {
    /// The SDK against a Python Oblivious HTTP gateway over real HTTP: it fetches the Python key
    /// configuration, signs, encapsulates, and opens the Python answer.
    @Test func theSDKTalksToAPythonGateway() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        _ = try await PythonPeer.run("ohttp_peer.py", ["keygen", folder.path])
        let server = try await PythonServer("ohttp_peer.py", ["serve", folder.path])
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let client = try SignetClient(configuration: .init(origins: [try Origin(base)], pinReportPath: nil))
        let key = try SigningKey.generate(.ed25519)
        await client.useSigner(MessageSigner(key: key, keyID: "device-1", algorithm: Ed25519Algorithm()))
        let answer = try await client.sendOblivious(
            "POST",
            base + "/v1/scores?game=3",
            fields: [("Content-Type", "application/json")],
            body: Array(#"{"score":9}"#.utf8)
        )
        #expect(answer.status == 200, "\(answer.text)")
        #expect(await client.obliviousKeys.map(\.keyID) == [3], "the Python gateway's configuration")
        let seen = try #require(answer.json)
        #expect(seen["method"] as? String == "POST" && seen["path"] as? String == "/v1/scores?game=3")
        #expect(seen["body"] as? String == #"{"score":9}"#)
        let fields = try #require(seen["fields"] as? [[String]])
        #expect(fields.contains { $0[0] == "signature-input" && $0[1].contains("keyid=\"device-1\"") }, "signed, then encrypted")
        #expect(fields.contains { $0[0] == "content-digest" })
    }
}
