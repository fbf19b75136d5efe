// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Synchronization
import Testing

/// SIGHUP to a running `signet serve` process.
@Suite(.awaitsCleanups) struct ReloadLiveTests {
    /// `signet serve` reloads on SIGHUP: a secret added to the file works without a restart, on the
    /// same process; a broken file is refused and the running configuration kept.
    @Test func hangupReloadsTheFileAndABrokenFileIsRefused() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let secretA = Base64.encode(Array("reload-secret-a-0123456789abcdef".utf8))
        let secretB = Base64.encode(Array("reload-secret-b-0123456789abcdef".utf8))
        func write(_ secrets: [(String, String)], broken: Bool = false) throws {
            var configuration: [String: Any] = [
                "upstream": "http://127.0.0.1:9", "listen": ["host": "127.0.0.1", "port": 0],
                "store": ["sqlite": "signet.sqlite"], "routes": [["prefix": "/", "access": "verified"]],
                "sharedSecrets": secrets.map { ["keyId": $0.0, "secretBase64": $0.1] },
            ]
            if broken { configuration["routes"] = [["prefix": "/a/../b", "access": "open"]] }
            try JSONSerialization.data(withJSONObject: configuration).write(to: folder.appendingPathComponent("signet.json"))
        }
        try write([("a", secretA)])
        let serve = try await ServeProcess(config: "signet.json", folder: folder)
        defer { serve.kill() }
        try Data(secretA.utf8).write(to: folder.appendingPathComponent("a.b64"))
        try Data(secretB.utf8).write(to: folder.appendingPathComponent("b.b64"))
        func reason(_ keyID: String) async throws -> String {
            let sent = try await SignetProcess.signet(
                ["request", "http://127.0.0.1:\(serve.port)/x", "--key", "\(keyID).b64", "--keyid", keyID], in: folder
            )
            return (try? JSONSerialization.jsonObject(with: Data(sent.stdout.utf8)) as? [String: Any])?["reason"] as? String ?? sent.stdout
        }
        // The upstream is down: a verified request gets as far as it (502), an unknown key does not.
        #expect(try await reason("a") == "upstream_unreachable")
        #expect(try await reason("b") == "unknown_key")

        try write([("a", secretA), ("b", secretB)])
        kill(serve.process.processIdentifier, SIGHUP)
        var taken = false
        for _ in 0..<200 where !taken {
            taken = try await reason("b") == "upstream_unreachable"
            if !taken { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(taken, "the secret added to the file is taken without a restart")

        try write([("b", secretB)], broken: true)
        kill(serve.process.processIdentifier, SIGHUP)
        try await Task.sleep(for: .milliseconds(500))
        #expect(serve.process.isRunning)
        #expect(try await reason("a") == "upstream_unreachable", "the refused file changed nothing")
    }
}
