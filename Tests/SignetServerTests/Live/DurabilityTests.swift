// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import Logging
import NIOCore
import SignetCore
import SignetMiddleware
import SignetServer
import SignetTestSupport
import Testing

/// `signet serve` killed with SIGKILL under load and restarted on the same SQLite file: no request
/// it had let through gets through again.
@Suite(.awaitsCleanups) struct DurabilityTests {
    @Test func aRestartAfterSIGKILLAcceptsNoNonceItHadAccepted() async throws {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (backend, backendServer) = try await GatewayHarness.startBackend(logger: logger)
        Cleanup.after { await backendServer.stop() }

        let config: [String: Any] = [
            "upstream": "http://127.0.0.1:\(backendServer.port)",
            "listen": ["host": "127.0.0.1", "port": 0],
            "store": ["sqlite": folder.appendingPathComponent("signet.sqlite").path],
            "publicAuthority": "scores.example.com",
            "routes": [["prefix": "/", "access": "verified"]],
        ]
        let configPath = folder.appendingPathComponent("signet.json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))

        var serve = try await ServeProcess(config: configPath, folder: folder)
        let first = "http://127.0.0.1:\(serve.port)"
        let device = try await DurabilityTests.register(at: first)
        // Requests are signed for the public name, so they stay valid whichever process answers.
        let requests = try (0..<400).map { index in
            try device.signer.sign(
                try HTTPMessage.request(
                    method: "POST",
                    uri: "http://scores.example.com/scores",
                    fields: [("Content-Type", "application/json")],
                    body: Array("{\"name\":\"p\(index)\",\"score\":\(index)}".utf8)
                ),
                created: Date(),
                nonce: "nonce-\(index)"
            )
        }

        // Under load: 8 senders; the process dies once 150 requests went through.
        let killer = serve
        let accepted = try await withThrowingTaskGroup(of: [Int].self) { group in
            for lane in 0..<8 {
                group.addTask {
                    var mine: [Int] = []
                    for index in stride(from: lane, to: requests.count, by: 8) {
                        // A request caught by the kill fails fast instead of waiting out a long timeout;
                        // one slow under a loaded machine before the kill is skipped, not the lane ended.
                        guard
                            let answer = try? await GatewayHarness.send(
                                requests[index].sent(to: first),
                                timeout: .seconds(2)
                            )
                        else {
                            if backend.receivedCount >= 150 { break }
                            continue
                        }
                        if answer.status == 201 { mine.append(index) }
                        if backend.receivedCount >= 150 { killer.kill() }
                    }
                    return mine
                }
            }
            return try await group.reduce(into: [Int]()) { $0 += $1 }
        }
        let receivedBeforeRestart = backend.allEntries.map(\.score)
        // Some answers are lost with the process; the backend's record is the truth.
        #expect(receivedBeforeRestart.count >= 150)
        #expect(Set(accepted).isSubset(of: Set(receivedBeforeRestart)))
        #expect(receivedBeforeRestart.count < requests.count, "the kill must land mid-load")

        serve = try await ServeProcess(config: configPath, folder: folder)
        defer { serve.terminate() }
        let second = "http://127.0.0.1:\(serve.port)"
        // Every request again: those the backend already has must all be refused as replays.
        for (index, request) in requests.enumerated() {
            let answer = try await GatewayHarness.send(request.sent(to: second))
            if receivedBeforeRestart.contains(index) {
                #expect(answer.status == 401 && answer.reason == "nonce_replayed", "request \(index): \(answer.text)")
            }
        }
        let scores = backend.allEntries.map(\.score)
        #expect(Set(scores).count == scores.count, "a request reached the backend twice")
        // Requests never sent before the kill do get through after the restart. (One in flight when the
        // process died may have had its nonce claimed without reaching the backend: it stays refused.)
        #expect(scores.count > receivedBeforeRestart.count)
    }

    static func register(at base: String) async throws -> GatewayHarness.Device {
        let key = try SigningKey.generate(.ed25519)
        let challengeAnswer = try await GatewayHarness.send(method: "POST", url: base + "/signet/v1/challenges")
        let challenge = try #require(challengeAnswer.json["challenge"] as? String)
        let body: [String: Any] = [
            "challenge": challenge, "alg": "ed25519",
            "publicKey": try JSONSerialization.jsonObject(with: Data(key.verificationKey.jwk.jsonString.utf8)),
            "signature": Base64.urlEncode(try Ed25519Algorithm().sign(Array(challenge.utf8), with: key)),
        ]
        let answer = try await GatewayHarness.send(
            method: "POST",
            url: base + "/signet/v1/devices",
            headers: [("Content-Type", "application/json")],
            body: Array(try JSONSerialization.data(withJSONObject: body))
        )
        let keyID = try #require(answer.json["keyid"] as? String, "\(answer.text)")
        let deviceID = try #require(answer.json["deviceId"] as? String)
        return GatewayHarness.Device(key: key, keyID: keyID, deviceID: deviceID, algorithm: Ed25519Algorithm())
    }
}

extension HTTPMessage {
    /// The same message aimed at another server (the signature keeps covering the public URL).
    func sent(to base: String) throws -> HTTPMessage {
        var copy = self
        let target = self.target!
        copy.head = .request(
            method: method!,
            target: try RequestTarget(uri: base + target.pathValue + (target.query.map { "?" + $0 } ?? ""))
        )
        return copy
    }
}
