// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import Logging
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// `docs/signet.sample.json` starts as shipped: in an empty folder it creates the files it names
/// (store, TLS development certificate, device CA, response key), and a request signed with its
/// `bank-v2` secret passes to the upstream over its TLS. A configuration that names a file that is
/// not there writes nothing at all.
@Suite(.awaitsCleanups) struct SampleConfigurationTests {
    static let sample = SignetProcess.repositoryRoot.appendingPathComponent("docs/signet.sample.json")

    @Test func theSampleConfigurationStartsAsShippedAndPassesASignedRequest() async throws {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let folder = try SignetProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (backend, backendServer) = try await GatewayHarness.startBackend(logger: logger)
        Cleanup.after { await backendServer.stop() }
        try FileManager.default.copyItem(at: Self.sample, to: folder.appendingPathComponent("signet.json"))

        let serve = try await ServeProcess(
            config: "signet.json",
            folder: folder,
            until: "development certificate",
            environment: ["SIGNET_LISTEN_PORT": "0", "SIGNET_UPSTREAM": "http://127.0.0.1:\(backendServer.port)"]
        )
        defer { serve.kill() }
        #expect(serve.banner.contains("listening on https://127.0.0.1:\(serve.port)"), "\(serve.banner)")
        let created = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(
            created.isSuperset(of: ["signet.sqlite", "tls.pem", "tls.key", "device-ca.pem", "device-ca.key", "gateway.key.pem"]),
            "\(created)"
        )

        let sample = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.sample)) as? [String: Any]
        let secrets = sample?["sharedSecrets"] as? [[String: Any]] ?? []
        let bank = try #require(secrets.first { $0["keyId"] as? String == "bank-v2" }?["secretBase64"] as? String)
        try Data(bank.utf8).write(to: folder.appendingPathComponent("bank.secret.b64"))
        let sent = try await SignetProcess.signet(
            [
                "request", "https://localhost:\(serve.port)/scores", "-d", #"{"name":"Enmerkar","score":7}"#,
                "-H", "Content-Type: application/json", "--key", "bank.secret.b64", "--keyid", "bank-v2",
                "--cacert", "tls.pem", "-i",
            ],
            in: folder
        )
        #expect(sent.stdout.hasPrefix("HTTP/1.1 201"), "\(sent.stdout)\(sent.stderr)")
        #expect(backend.receivedCount == 1)

        let unsigned = try await SignetProcess.run(
            "curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", "tls.pem", "https://localhost:\(serve.port)/scores"],
            in: folder
        )
        #expect(unsigned.stdout == "401", "the verified route refuses an unsigned request")
        #expect(backend.receivedCount == 1)
    }

    @Test func aConfigurationNamingAMissingFileWritesNothing() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.sample)) as? [String: Any])
        configuration["trustDocument"] = ["file": "trust.jws"]
        try JSONSerialization.data(withJSONObject: configuration).write(to: folder.appendingPathComponent("signet.json"))

        let refused = try await SignetProcess.signet(
            ["serve", "--config", "signet.json"],
            in: folder
        )
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("cannot read the trust document trust.jws"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("Usage:"), "a configuration error is not a usage error")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["signet.json"], "nothing written")
    }

    @Test func aBusyAddressIsNamed() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try await ServeProcess(
            config: nil,
            folder: folder,
            environment: ["SIGNET_UPSTREAM": "http://127.0.0.1:9", "SIGNET_LISTEN_PORT": "0", "SIGNET_STORE": "one.sqlite"]
        )
        defer { first.kill() }
        let second = try await SignetProcess.run(
            "env",
            ["SIGNET_UPSTREAM=http://127.0.0.1:9", "SIGNET_LISTEN_PORT=\(first.port)", "SIGNET_STORE=two.sqlite", SignetProcess.signetPath, "serve"],
            in: folder
        )
        #expect(second.status == 1)
        #expect(second.stderr.contains("cannot listen on 127.0.0.1:\(first.port)"), "\(second.stderr)")
    }
}
