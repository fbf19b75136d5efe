// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import NIOHTTP1
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// `signet passwd` writes users into the store a `signet serve` process then logs them in from;
/// each refusal is a usage error that writes nothing.
@Suite(.awaitsCleanups) struct PasswdCommandTests {
    @Test func usersSetOfflineLogInThroughServeAndDeletedOnesDoNot() async throws {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-passwd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, backendServer) = try await GatewayHarness.startBackend(logger: logger)
        Cleanup.after { await backendServer.stop() }
        var config: [String: Any] = [
            "upstream": "http://127.0.0.1:\(backendServer.port)",
            "listen": ["host": "127.0.0.1", "port": 0],
            "store": ["sqlite": folder.appendingPathComponent("signet.sqlite").path],
            "routes": [["prefix": "/echo", "access": "password"]],
            "passwords": ["realm": "cli-bank", "basicIterations": 210_000, "allowInsecureHTTP": true],
        ]
        let configPath = folder.appendingPathComponent("signet.json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))

        let created = try await SignetProcess.signet(["passwd", "--config", configPath, "Aladdin"], stdin: Array("open sesame\n".utf8))
        #expect(created.status == 0 && created.stdout == "created user Aladdin\n", "\(created.stderr)")
        let changed = try await SignetProcess.signet(["passwd", "--config", configPath, "Aladdin"], stdin: Array("open sesame\n".utf8))
        #expect(changed.stdout == "changed the password of Aladdin\n")
        // Refused without writing: an empty password, a name Basic cannot carry, no such user to delete.
        for (arguments, stdin) in [
            (["passwd", "--config", configPath, "Bob"], "\n"), (["passwd", "--config", configPath, "a:b"], "pw\n"),
            (["passwd", "--config", configPath, "--delete", "Nobody"], ""),
        ] {
            let refused = try await SignetProcess.signet(arguments, stdin: Array(stdin.utf8))
            #expect(refused.status != 0 && !refused.stderr.isEmpty, "\(arguments)")
        }

        let serve = try await ServeProcess(config: configPath, folder: folder)
        defer { serve.kill() }
        let base = "http://127.0.0.1:\(serve.port)"
        let basic = try await GatewayHarness.send(
            method: "GET",
            url: base + "/echo/x",
            headers: [("Authorization", BasicCredentials(username: "Aladdin", password: "open sesame").fieldValue)]
        )
        #expect(basic.status == 200 && (basic.json["headers"] as? [String: String])?["signet-user"] == "Aladdin")
        let bobAnswer = try await GatewayHarness.send(
            method: "GET",
            url: base + "/echo/x",
            headers: [("Authorization", BasicCredentials(username: "Bob", password: "x").fieldValue)]
        )
        #expect(bobAnswer.reason == "credentials_invalid")

        let deleted = try await SignetProcess.signet(["passwd", "--config", configPath, "--delete", "Aladdin"])
        #expect(deleted.stdout == "deleted user Aladdin and revoked its devices\n")
        let gone = try await GatewayHarness.send(
            method: "GET",
            url: base + "/echo/x",
            headers: [("Authorization", BasicCredentials(username: "Aladdin", password: "open sesame").fieldValue)]
        )
        #expect(gone.status == 401 && gone.reason == "credentials_invalid")

        // A configuration without passwords has nobody to set.
        config["passwords"] = nil
        config["routes"] = [["prefix": "/", "access": "open"]]
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
        let none = try await SignetProcess.signet(["passwd", "--config", configPath, "Aladdin"], stdin: Array("x\n".utf8))
        #expect(none.status != 0 && none.stderr.contains("configures no passwords"))
    }
}
