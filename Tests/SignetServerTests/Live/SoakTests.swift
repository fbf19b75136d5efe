// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import SignetCore
import SignetTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A bounded soak of `signet serve` as its own process: signed and open traffic, replays, an
/// upstream that answers early, resets and dawdles, clients that vanish mid-body or stall. At the
/// end the process is alive, answers `/healthz`, no nonce reached the upstream twice, and its memory
/// stayed bounded.
@Suite(.awaitsCleanups) struct SoakTests {
    static let seconds: Double = 15
    static let secret = Array("soak-secret-0123456789abcdef0123".utf8)

    @Test func theGatewaySurvivesMixedTrafficAgainstAMisbehavingUpstream() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-soak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let upstream = try await MisbehavingUpstream.start(.mixed)
        Cleanup.after { await upstream.stop() }
        let config: [String: Any] = [
            "upstream": "http://127.0.0.1:\(upstream.port)",
            "listen": ["host": "127.0.0.1", "port": 0],
            "store": ["sqlite": folder.appendingPathComponent("signet.sqlite").path],
            "maxBodyBytes": 2 << 20,
            "upstreamTimeoutSeconds": 2,
            "sharedSecrets": [["keyId": "soak", "secretBase64": Base64.encode(Self.secret)]],
            "routes": [["prefix": "/open", "access": "open"], ["prefix": "/", "access": "verified"]],
        ]
        let configPath = folder.appendingPathComponent("signet.json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
        let serve = try await ServeProcess(config: configPath, folder: folder)
        defer { serve.kill() }
        let base = "http://127.0.0.1:\(serve.port)"
        let signer = MessageSigner(key: try SigningKey(secret: Self.secret), keyID: "soak", algorithm: HMACSHA256())
        let deadline = Date().addingTimeInterval(Self.seconds)
        var warmRSS = 0

        let counts = try await withThrowingTaskGroup(of: [String: Int].self) { group in
            for lane in 0..<6 {
                group.addTask {
                    var counts: [String: Int] = [:]
                    var round = 0
                    while Date() < deadline {
                        round += 1
                        let kind = ["early", "reset", "slow", "echo"][(lane + round) % 4]
                        let outcome: String
                        switch (lane + round) % 5 {
                        case 0, 1:
                            // Signed, then the same bytes again: the replay must never reach upstream.
                            let message = try HTTPMessage.request(
                                method: "POST",
                                uri: base + "/\(kind)/\(lane)-\(round)",
                                fields: [("Content-Type", "application/json")],
                                body: Array(repeating: 0x7B, count: 512 + round % 4096)
                            )
                            let signed = try signer.sign(message, created: Date(), nonce: "n-\(lane)-\(round)")
                            let first = try? await GatewayHarness.send(signed, timeout: .seconds(10))
                            let replay = try? await GatewayHarness.send(signed, timeout: .seconds(10))
                            #expect(replay == nil || replay?.reason == "nonce_replayed", "\(replay?.text ?? "")")
                            outcome = "signed-\(first?.status ?? 0)"
                        case 2:
                            let body = [UInt8](repeating: 0x61, count: 1 << 20)
                            let answer = try? await GatewayHarness.send(
                                method: "POST",
                                url: base + "/open/\(kind)",
                                body: body,
                                timeout: .seconds(10)
                            )
                            outcome = "open-\(answer?.status ?? 0)"
                        case 3:
                            // Announces a megabyte, sends a little, vanishes.
                            let head = "POST /open/\(kind) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1048576\r\n\r\n"
                            _ = try? await RawHTTP.exchange(
                                port: serve.port,
                                head + String(repeating: "x", count: 10_000),
                                timeout: .milliseconds(50)
                            )
                            outcome = "vanished"
                        default:
                            // A head that never ends, briefly.
                            _ = try? await RawHTTP.exchange(
                                port: serve.port,
                                "GET /\(kind) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
                                timeout: .milliseconds(100)
                            )
                            outcome = "stalled"
                        }
                        counts[outcome, default: 0] += 1
                    }
                    return counts
                }
            }
            try await Task.sleep(for: .seconds(3))
            warmRSS = Self.residentKilobytes(serve.process.processIdentifier)
            var all: [String: Int] = [:]
            for try await counts in group { all.merge(counts, uniquingKeysWith: +) }
            return all
        }

        #expect(serve.process.isRunning, "signet serve died: \(counts)")
        let health = try await GatewayHarness.send(method: "GET", url: base + "/healthz")
        #expect(health.status == 200)
        // Each nonce reached the upstream at most once, though every signed request went twice.
        var nonces: [String: Int] = [:]
        for seen in upstream.seen {
            for input in seen.values("Signature-Input") {
                guard let range = input.range(of: "nonce=\"") else { continue }
                let nonce = input[range.upperBound...].prefix { $0 != "\"" }
                nonces[String(nonce), default: 0] += 1
            }
        }
        #expect(!nonces.isEmpty && nonces.values.allSatisfy { $0 == 1 }, "\(nonces.filter { $0.value > 1 })")
        #expect((counts["signed-200"] ?? 0) > 0 && (counts["open-200"] ?? 0) > 0, "\(counts)")
        let rss = Self.residentKilobytes(serve.process.processIdentifier)
        print("soak: \(counts.sorted { $0.key < $1.key }), \(nonces.count) nonces upstream, rss \(warmRSS) -> \(rss) kB")
        #expect(rss < 400_000 && rss < warmRSS * 3, "resident \(rss) kB, \(warmRSS) kB after warm-up; \(counts)")
    }

    /// VmRSS of a process, in kB (0 when unknown).
    static func residentKilobytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
