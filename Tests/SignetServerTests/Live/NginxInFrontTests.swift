// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import NIOCore
import Logging
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `deploy/nginx.conf` in front of two `signet serve` processes (on one SQLite file), as
/// docs/operations.md sets them up: signed requests go through either, the gateways log nginx's
/// request id, and when one instance is killed, nginx sends what would have gone to it to the
/// other — no request is lost, none is accepted twice.
@Suite(.awaitsCleanups) struct NginxInFrontTests {
    @Test(.enabled(if: DeploymentFileTests.installed("nginx"), "nginx is not installed"))
    func aKilledInstanceLosesNoRequestBehindNginx() async throws {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let folder = try SignetProcess.temporaryDirectory()
        Cleanup.after { try? FileManager.default.removeItem(at: folder) }
        // nginx's workers run as an unprivileged user and write their log here.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        let (backend, backendServer) = try await GatewayHarness.startBackend(logger: logger)
        Cleanup.after { await backendServer.stop() }
        let nginxPort = try await FreePort.loopback()
        let authority = "127.0.0.1:\(nginxPort)"
        let configuration: [String: Any] = [
            "upstream": "http://127.0.0.1:\(backendServer.port)", "listen": ["host": "127.0.0.1", "port": 0],
            "publicScheme": "http", "trustedProxies": ["127.0.0.1/32"],
            "store": ["sqlite": "shared.sqlite"], "routes": [["prefix": "/", "access": "verified"]],
            "sharedSecrets": [["keyId": "bank-v1", "secretBase64": Base64.encode(GatewayHarness.bankSecret)]],
        ]
        try JSONSerialization.data(withJSONObject: configuration).write(to: folder.appendingPathComponent("signet.json"))
        let first = try await ServeProcess(config: "signet.json", folder: folder)
        Cleanup.after { first.kill() }
        let second = try await ServeProcess(config: "signet.json", folder: folder)
        Cleanup.after { second.kill() }

        // The documented configuration, on loopback and in plain HTTP, in front of these two.
        var text = try String(contentsOf: DeploymentFileTests.deploy.appendingPathComponent("nginx.conf"), encoding: .utf8)
        text = text.replacingOccurrences(of: "server 10.0.0.11:8080;", with: "server 127.0.0.1:\(first.port);")
            .replacingOccurrences(of: "server 10.0.0.12:8080;", with: "server 127.0.0.1:\(second.port);")
            .replacingOccurrences(of: "listen 443 ssl;", with: "listen \(authority);")
            .replacingOccurrences(of: "/var/log/nginx/signet.log", with: folder.appendingPathComponent("access.log").path)
            .split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("ssl_certificate") && !$0.contains("worker_processes") }
            .joined(separator: "\n")
        let nginxConfiguration = folder.appendingPathComponent("nginx.conf").path
        try ("worker_processes 1;\ndaemon off;\npid \(folder.path)/nginx.pid;\nerror_log \(folder.path)/error.log;\n" + text)
            .write(toFile: nginxConfiguration, atomically: true, encoding: .utf8)
        let nginx = Process()
        nginx.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : "/usr/bin/nginx")
        nginx.arguments = ["-p", folder.path, "-c", nginxConfiguration]
        nginx.standardInput = FileHandle.nullDevice
        nginx.standardOutput = FileHandle.nullDevice
        nginx.standardError = FileHandle.nullDevice
        try nginx.run()
        Cleanup.after {
            // Polled, not waited for: a blocking wait holds a thread of Swift's pool.
            kill(nginx.processIdentifier, SIGTERM)
            while nginx.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
        }
        let bank = MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())
        func send(_ name: String) async throws -> GatewayHarness.Answer {
            let request = try HTTPMessage.request(
                method: "POST",
                uri: "http://\(authority)/scores",
                fields: [("Content-Type", "application/json")],
                body: Array("{\"name\":\"\(name)\",\"score\":1}".utf8)
            )
            return try await GatewayHarness.send(try bank.sign(request, created: Date(), nonce: Nonce.random()))
        }
        // nginx up: the first answer that is not a connection error.
        var ready = false
        for _ in 0..<100 where !ready {
            ready = (try? await GatewayHarness.send(method: "GET", url: "http://\(authority)/readyz", timeout: .seconds(2)).status) == 200
            if !ready { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(ready, "nginx in front of both gateways")

        var statuses: [Int] = []
        for index in 0..<10 { statuses.append(try await send("before-\(index)").status) }
        first.kill()
        for index in 0..<10 { statuses.append(try await send("after-\(index)").status) }
        #expect(statuses.allSatisfy { $0 == 201 }, "\(statuses)")
        #expect(backend.receivedCount == 20, "each once")
        // nginx's request id is the one each gateway logged and forwarded. nginx writes a line as
        // it finishes a request, which can be just after its client has the answer.
        func logged() -> (String, Int) {
            let log = (try? String(contentsOf: folder.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
            return (log, log.split(separator: "\n").filter { $0.contains("POST /scores") && $0.contains(" 201 ") }.count)
        }
        for _ in 0..<40 where logged().1 < 20 { try await Task.sleep(for: .milliseconds(50)) }
        let (log, lines) = logged()
        #expect(lines == 20, "\(log)")
    }
}
