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
            environment: [
                "SIGNET_LISTEN_PORT": "0", "SIGNET_ADMIN_LISTEN_PORT": "0",
                "SIGNET_UPSTREAM": "http://127.0.0.1:\(backendServer.port)",
            ]
        )
        defer { serve.kill() }
        #expect(serve.banner.contains("listening on https://127.0.0.1:\(serve.port)"), "\(serve.banner)")
        let created = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(
            created.isSuperset(of: ["signet.sqlite", "tls.pem", "tls.key", "device-ca.pem", "device-ca.key", "gateway.key.pem"]),
            "\(created)"
        )

        // Keys made on first start are the owner's alone.
        for key in ["gateway.key.pem", "tls.key", "device-ca.key"] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(key).path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600, "\(key): \(String(describing: mode))")
        }
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

        // A device key registered with `signet register` (challenge, proof, certificate) signs the
        // next request; the upstream is told which device sent it.
        #expect(try await SignetProcess.signet(["keygen", "--alg", "ecdsa-p256-sha256", "--name", "device"], in: folder).status == 0)
        let registered = try await SignetProcess.signet(
            ["register", "https://localhost:\(serve.port)", "--key", "device.key.pem", "--cacert", "tls.pem", "--certificate-out", "device.pem"],
            in: folder
        )
        #expect(registered.status == 0, "\(registered.stdout)\(registered.stderr)")
        let deviceID = try #require(registered.lines.first { $0.hasPrefix("deviceId: dev_") }?.dropFirst("deviceId: ".count))
        let keyID = try #require(registered.lines.first { $0.hasPrefix("keyid: ") }?.dropFirst("keyid: ".count))
        #expect(try String(contentsOf: folder.appendingPathComponent("device.pem"), encoding: .utf8).hasPrefix("-----BEGIN CERTIFICATE"))
        let echoed = try await SignetProcess.signet(
            ["request", "https://localhost:\(serve.port)/echo/headers", "--key", "device.key.pem", "--keyid=\(keyID)", "--cacert", "tls.pem"],
            in: folder
        )
        #expect(echoed.stdout.contains(String(deviceID)), "\(echoed.stdout)\(echoed.stderr)")
        let again = try await SignetProcess.signet(
            ["register", "https://localhost:\(serve.port)", "--key", "device.key.pem", "--cacert", "tls.pem"],
            in: folder
        )
        #expect(again.status == 1 && again.stderr.contains("device_exists"), "\(again.stderr)")

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
