// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
#if canImport(Glibc)
    import Glibc
#endif
import Logging
import NIOHTTP1
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// Issue 41 §2: nginx (`auth_request`) and Caddy (`forward_auth`), from Debian, in front of an API
/// with `signet serve` (a process) judging for them — each with the configuration block of
/// docs/integrations.md as written, only its addresses changed. A signed GET reaches the API with
/// its identity, a client's own identity fields never do, an unsigned one is refused with its
/// reason, a signed body the proxy does not send is not taken on trust, and a `monitor` route lets
/// a bad request through with its verdict.
@Suite(.awaitsCleanups) struct ForwardAuthProxyTests {
    /// The fenced block after `<!-- tested: name -->` in docs/integrations.md.
    static func documented(_ name: String) throws -> String {
        let text = try String(
            contentsOf: SignetProcess.repositoryRoot.appendingPathComponent("docs/integrations.md"), encoding: .utf8)
        let after = try #require(text.components(separatedBy: "<!-- tested: \(name) -->\n").dropFirst().first)
        let lines = after.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.hasPrefix("```") == true)
        return lines.dropFirst().prefix { !$0.hasPrefix("```") }.joined(separator: "\n")
    }

    /// The example API, and `signet serve` (a process of its own) judging for the proxy in front.
    struct Behind {
        let api: Int
        let signet: ServeProcess
        /// The authorization listener's port, as `signet serve` printed it.
        let authorization: Int
    }

    static func behind(folder: URL) async throws -> Behind {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let (_, backend) = try await GatewayHarness.startBackend(logger: logger)
        Cleanup.after { await backend.stop() }
        let configuration: [String: Any] = [
            "upstream": "http://127.0.0.1:\(backend.port)", "listen": ["host": "127.0.0.1", "port": 0],
            "authorizationListener": ["listen": ["host": "127.0.0.1", "port": 0]],
            "trustedProxies": ["127.0.0.1/32"], "store": ["sqlite": "signet.sqlite"],
            "routes": [
                ["prefix": "/scores/top", "methods": ["GET"], "access": "open"],
                ["prefix": "/echo/watched", "access": "verified", "mode": "monitor"],
                ["prefix": "/", "access": "verified"],
            ],
            "sharedSecrets": [["keyId": "bank-v1", "secretBase64": Base64.encode(GatewayHarness.bankSecret)]],
        ]
        try JSONSerialization.data(withJSONObject: configuration).write(to: folder.appendingPathComponent("signet.json"))
        let signet = try await ServeProcess(config: "signet.json", folder: folder, until: "signet authorization listener on")
        // Killed: a clean shutdown's wait would hold a thread of Swift's pool (ServeProcess blocks).
        Cleanup.after { signet.kill() }
        let line = try #require(signet.banner.split(separator: "\n").first { $0.contains("authorization listener on") })
        let port = try #require(line.range(of: "127.0.0.1:").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) })
        return Behind(api: backend.port, signet: signet, authorization: port)
    }

    /// The documented addresses, as this test's processes have them.
    static func addresses(_ text: String, _ behind: Behind) -> String {
        text.replacingOccurrences(of: "127.0.0.1:3000", with: "127.0.0.1:\(behind.api)")
            .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(behind.signet.port)")
            .replacingOccurrences(of: "127.0.0.1:8081", with: "127.0.0.1:\(behind.authorization)")
    }

    @Test(.enabled(if: DeploymentFileTests.installed("nginx"), "nginx is not installed"))
    func nginxAuthRequest() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        Cleanup.after { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        let behind = try await Self.behind(folder: folder)
        let port = try await FreePort.loopback()
        let server = try Self.addresses(Self.documented("nginx"), behind)
            .replacingOccurrences(of: "listen 80;", with: "listen 127.0.0.1:\(port);")
        let temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(folder.path)/\($0);" }
        let configuration = """
            worker_processes 1;
            daemon off;
            pid \(folder.path)/nginx.pid;
            error_log \(folder.path)/error.log;
            events { worker_connections 64; }
            http {
            access_log off;
            \(temp.joined(separator: "\n"))
            \(server)
            }
            """
        let file = folder.appendingPathComponent("nginx.conf").path
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)
        let nginx = try RunningProcess(
            FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : "/usr/bin/nginx",
            ["-p", folder.path, "-c", file], mergingErrors: true)
        // SIGTERM: nginx's master ends its workers (killed, it leaves them holding connections open).
        Cleanup.after { await nginx.stop(SIGTERM) }
        try await Self.check(through: "127.0.0.1:\(port)", proxy: "nginx", refusalsCarryTheirBody: false, log: { nginx.lines.joined(separator: "\n") })
    }

    @Test(.enabled(if: DeploymentFileTests.installed("caddy"), "caddy is not installed"))
    func caddyForwardAuth() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        Cleanup.after { try? FileManager.default.removeItem(at: folder) }
        let behind = try await Self.behind(folder: folder)
        let port = try await FreePort.loopback()
        let site = try Self.addresses(Self.documented("caddy"), behind)
            .replacingOccurrences(of: "api.example.com {", with: "http://127.0.0.1:\(port) {")
        let file = folder.appendingPathComponent("Caddyfile").path
        try "{\n\tadmin off\n\tauto_https off\n}\n\(site)\n".write(toFile: file, atomically: true, encoding: .utf8)
        let caddy = try RunningProcess(
            "env", ["HOME=\(folder.path)", "XDG_DATA_HOME=\(folder.path)", "XDG_CONFIG_HOME=\(folder.path)",
                    "caddy", "run", "--config", file, "--adapter", "caddyfile"], mergingErrors: true)
        Cleanup.after { caddy.kill() }
        try await Self.check(through: "127.0.0.1:\(port)", proxy: "caddy", refusalsCarryTheirBody: true, log: { caddy.lines.joined(separator: "\n") })
    }

    /// The requests through the proxy at `authority`, and what reaches the API.
    static func check(through authority: String, proxy: String, refusalsCarryTheirBody: Bool, log: () -> String) async throws {
        // Each try bounded: whatever answers on the port must answer soon, or it is not the proxy.
        var ready = false
        for _ in 0..<200 where !ready {
            ready = (try? await GatewayHarness.send(method: "GET", url: "http://\(authority)/scores/top", timeout: .seconds(2)))?.status == 200
            if !ready { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(ready, "the proxy in front: \(log())")
        let bank = MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())

        // A signed GET reaches the API with the identity; the client's own identity field does not.
        var get = try HTTPMessage.request(method: "GET", uri: "http://\(authority)/echo/me?page=2")
        get.fields.append(name: "Signet-User", value: "forged")
        let signed = try await GatewayHarness.send(try bank.sign(get, created: Date(), nonce: Nonce.random()))
        #expect(signed.status == 200, "\(signed.text)")
        let seen = try #require(signed.json["headers"] as? [String: String], "\(signed.text)")
        #expect(seen["signet-key-id"] == "bank-v1" && seen["signet-trust-level"] == "shared-secret", "\(seen)")
        // Empty where the answer has none: nginx sends no empty field, Caddy sends it empty.
        #expect((seen["signet-user"] ?? "").isEmpty, "a client's identity field reached the API: \(seen)")
        #expect(signed.json["path"] as? String == "/echo/me?page=2")

        // The client's say on which request is asked about is never read: an unsigned DELETE
        // naming an open GET both ways. nginx sets the one way over the client's and empties the
        // other, so the DELETE is judged as what it is; Caddy sets `X-Forwarded-*` and passes the
        // client's `X-Original-*` on, and a question naming the request both ways is refused.
        let decoy = try await GatewayHarness.send(
            method: "DELETE", url: "http://\(authority)/echo/me",
            headers: [("X-Forwarded-Method", "GET"), ("X-Forwarded-Uri", "/scores/top"),
                      ("X-Original-Method", "GET"), ("X-Original-URI", "/scores/top")])
        let expected = proxy == "nginx" ? (401, "signature_missing") : (400, "authorization_request_invalid")
        #expect(decoy.status == expected.0 && decoy.headers["Signet-Reason"] == [expected.1], "\(decoy.status) \(decoy.headers)")

        // What would make the API act on another request, or speak for the client, is removed.
        let override = try await GatewayHarness.send(
            try bank.sign(
                try HTTPMessage.request(
                    method: "GET", uri: "http://\(authority)/echo/override",
                    fields: [("X-HTTP-Method-Override", "DELETE"), ("X-Original-URL", "/admin"), ("Signet_User", "forged")]),
                created: Date(), nonce: Nonce.random()))
        let passed = try #require(override.json["headers"] as? [String: String], "\(override.text)")
        #expect(passed["x-http-method-override"] == nil && passed["x-original-url"] == nil && passed["signet_user"] == nil, "\(passed)")

        // Unsigned: refused, with the reason code.
        let unsigned = try await GatewayHarness.send(method: "GET", url: "http://\(authority)/echo/me")
        #expect(unsigned.status == 401, "\(unsigned.text)")
        #expect(unsigned.headers["Signet-Reason"] == ["signature_missing"], "\(unsigned.headers)")
        if refusalsCarryTheirBody { #expect(unsigned.reason == "signature_missing") }

        // A signed body the proxy does not send: not taken on trust.
        let post = try HTTPMessage.request(
            method: "POST", uri: "http://\(authority)/echo/upload", fields: [("Content-Type", "application/json")], body: Array("{}".utf8))
        let withheld = try await GatewayHarness.send(try bank.sign(post, created: Date(), nonce: Nonce.random()))
        #expect(withheld.status == 403 && withheld.headers["Signet-Reason"] == ["body_not_forwarded"], "\(withheld.status) \(withheld.text)")

        // A monitor route: through, with the verdict enforcing would give.
        let watched = try await GatewayHarness.send(method: "GET", url: "http://\(authority)/echo/watched/page")
        #expect(watched.status == 200, "\(watched.text)")
        let told = try #require(watched.json["headers"] as? [String: String])
        #expect(told["signet-verdict"] == "signature_missing" && (told["signet-key-id"] ?? "").isEmpty, "\(told)")
    }
}
