// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import Logging
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// Two `signet serve` processes on one SQLite file (one host, a local file system): SQLite's file
/// lock serialises their writes, and a signed request sent to both at once is accepted once.
@Suite(.awaitsCleanups) struct SQLiteSharedFileTests {
    @Test func twoProcessesOnOneFileAcceptANonceOnce() async throws {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let folder = try SignetProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (backend, backendServer) = try await GatewayHarness.startBackend(logger: logger)
        Cleanup.after { await backendServer.stop() }
        let configuration: [String: Any] = [
            "upstream": "http://127.0.0.1:\(backendServer.port)", "listen": ["host": "127.0.0.1", "port": 0],
            "publicScheme": "http", "publicAuthority": "api.example.com",
            "store": ["sqlite": "shared.sqlite"], "routes": [["prefix": "/", "access": "verified"]],
            "sharedSecrets": [["keyId": "bank-v1", "secretBase64": Base64.encode(GatewayHarness.bankSecret)]],
        ]
        try JSONSerialization.data(withJSONObject: configuration).write(to: folder.appendingPathComponent("signet.json"))
        let first = try await ServeProcess(config: "signet.json", folder: folder)
        defer { first.kill() }
        let second = try await ServeProcess(config: "signet.json", folder: folder)
        defer { second.kill() }

        let bank = MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())
        do {
            let request = try HTTPMessage.request(
                method: "POST",
                uri: "http://api.example.com/scores",
                fields: [("Content-Type", "application/json")],
                body: Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
            )
            let signed = try bank.sign(request, created: Date(), nonce: Nonce.random())
            let statuses = try await ExactlyOnceTests.storm(
                signed,
                gateways: ["http://127.0.0.1:\(first.port)", "http://127.0.0.1:\(second.port)"]
            )
            #expect(statuses["201 "] == 1, "\(statuses)")
            #expect(statuses["401 nonce_replayed"] == ExactlyOnceTests.copies - 1, "\(statuses)")
        }
        #expect(backend.receivedCount == 1)
    }
}
