// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import Logging
import SignetCore
import SignetMiddleware
import SignetServer
import SignetTestSupport
import Testing

/// `signet serve` with a development certificate prints its pins; `signet request` sends a signed,
/// pinned request through it, and refuses when the pins are wrong. Two real processes over TLS.
@Suite(.awaitsCleanups) struct ServeOverTLSTests {
    @Test func serveOverTLSPrintsPinsAndRequestSendsThroughThem() async throws {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-tls-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (backend, backendServer) = try await GatewayHarness.startBackend(logger: logger)
        Cleanup.after { await backendServer.stop() }

        let secret = Base64.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        try Data(secret.utf8).write(to: folder.appendingPathComponent("cli.secret.b64"))
        let responseKey = try SigningKey.generate(.ed25519)
        try Data(responseKey.pemRepresentation!.utf8).write(to: folder.appendingPathComponent("gateway.key.pem"))
        try Data(responseKey.verificationKey.jwk.jsonString.utf8).write(to: folder.appendingPathComponent("gateway.jwk"))
        let config: [String: Any] = [
            "upstream": "http://127.0.0.1:\(backendServer.port)",
            "listen": ["host": "127.0.0.1", "port": 0],
            "store": ["sqlite": folder.appendingPathComponent("signet.sqlite").path],
            "routes": [["prefix": "/", "access": "verified"]],
            "sharedSecrets": [["keyId": "cli", "secretBase64": secret]],
            "responseSigning": ["keyFile": folder.appendingPathComponent("gateway.key.pem").path, "keyId": "gateway"],
            "tls": [
                "development": true, "certificateFile": folder.appendingPathComponent("tls.pem").path,
                "keyFile": folder.appendingPathComponent("tls.key").path,
            ],
        ]
        let configPath = folder.appendingPathComponent("signet.json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))

        let serve = try await ServeProcess(config: configPath, folder: folder, until: "development certificate")
        defer { serve.kill() }
        let lines = serve.banner.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("listening on https://127.0.0.1:\(serve.port)") })
        let port = serve.port
        let pins = lines.filter { $0.hasPrefix("  sha256/") }.map { String($0.dropFirst(2).prefix { $0 != " " }) }
        #expect(pins.count == 2, "leaf and development CA: \(serve.banner)")
        #expect(lines.contains { $0.hasSuffix("CN=localhost") })

        // The pins printed are the chain written to tls.pem.
        let pinned = try await SignetProcess.signet(["pin", "--cert", "tls.pem"], in: folder)
        #expect(pinned.stdout.split(separator: "\n").map { String($0.prefix { $0 != " " }) } == pins)

        let url = "https://localhost:\(port)/scores"
        let common = [
            url, "-d", "{\"name\":\"Lugalbanda\",\"score\":42}", "-H", "Content-Type: application/json",
            "--key", "cli.secret.b64", "--keyid", "cli", "--cacert", "tls.pem",
        ]
        let sent = try await SignetProcess.signet(
            ["request"] + common + ["--pin", pins[0], "--pin", pins[1], "--response-key", "gateway.jwk", "-i"],
            in: folder
        )
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout.hasPrefix("HTTP/1.1 201"), "\(sent.stdout)")
        #expect(sent.stdout.contains("# response signature by gateway verified"))
        #expect(sent.stdout.contains("\"score\":42"))
        #expect(backend.receivedCount == 1)

        let otherPin = "sha256/" + Base64.encode([UInt8](repeating: 7, count: 32))
        let refused = try await SignetProcess.signet(["request"] + common + ["--pin", otherPin, "--waive-backup"], in: folder)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("signet: pin_mismatch: Certificate pinning failure!"))
        #expect(refused.stderr.contains(pins[0]), "the served pins are listed")
        #expect(backend.receivedCount == 1, "nothing was sent through a mismatched pin")

        let reported = try await SignetProcess.signet(
            ["request"] + common + ["--pin", otherPin, "--waive-backup", "--report-only"],
            in: folder
        )
        #expect(reported.status == 0, "\(reported.stderr)")
        #expect(reported.stderr.contains("pin failure report (report-only)"))
        #expect(backend.receivedCount == 2)

        // Without the development CA the system roots do not know the certificate.
        let untrusted = try await SignetProcess.signet(["request", url, "--pin", pins[0], "--pin", pins[1]], in: folder)
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.contains("signet: certificate_untrusted"))
    }
}
