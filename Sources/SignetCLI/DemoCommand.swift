// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import AsyncHTTPClient
import ExampleScores
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SignetCore
import SignetMiddleware
import SignetServer
import SignetSimulator
import SignetStore
import SwiftASN1
import X509


struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start the example high-score backend and the gateway on loopback, then play a device.",
        discussion: """
            The gateway speaks HTTPS with a development certificate and keeps its state in a SQLite file in a \
            temporary folder. The device, using the client SDK with pinned TLS, gets a challenge, registers a \
            P-256 key with a CSR, submits a signed score, then a tampered score, a replay and an unsigned \
            request, which are rejected with their reason codes; then App Attest, mutual TLS and a pin failure; \
            then the banking app: a Digest login (a wrong password, a replayed nc and a stale nonce refused), \
            the device registered with a CSR in the same login, and mutual TLS without the password.
            """
    )

    @Flag(help: "Keep both servers running after the walkthrough (Ctrl-C to stop).")
    var keepRunning = false

    func run() async throws {
        var logger = Logger(label: "signet.demo")
        logger.logLevel = .warning
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let backend = ScoresBackend()
        let backendServer = try await BackgroundServer.start(logger: logger) {
            backend.application(logger: logger, onServerRunning: $0)
        }

        let gatewayKey = try SigningKey.generate(.ed25519)
        let keyFile = folder.appendingPathComponent("gateway.key.pem").path
        try Data((gatewayKey.pemRepresentation ?? "").utf8).write(to: URL(fileURLWithPath: keyFile))
        let legacySecret = Array("a9bk342nziAFD234".utf8)
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:\(backendServer.port)")
        configuration.listen.port = 0
        configuration.store = .sqlite(folder.appendingPathComponent("signet.sqlite").path)
        configuration.routes = [
            .init(prefix: "/scores/top", methods: ["GET"], access: .open),
            .init(prefix: "/scores/received", access: .clientCertificate),
            .init(prefix: "/echo/login", access: .password),
            .init(prefix: "/echo/account", access: .clientCertificate),
            .init(prefix: "/legacy/score", access: .legacyQueryHMAC(keyId: "highscore-legacy")),
            .init(prefix: "/", access: .verified),
        ]
        configuration.sharedSecrets = [.init(keyId: "highscore-legacy", secretBase64: Base64.encode(legacySecret))]
        configuration.responseSigning = .init(keyFile: keyFile, keyId: "gateway")
        // App Attest, with the simulator's development CA as the trusted root (never Apple's default):
        // a development gateway, which is what takes the simulator's roots.
        configuration.development = true
        let simulatorCA = try DevelopmentAttestationCA()
        let rootsFile = folder.appendingPathComponent("simulator-root.pem").path
        try Data(try simulatorCA.rootPEM.utf8).write(to: URL(fileURLWithPath: rootsFile))
        configuration.appAttest = .init(
            appIDs: [DemoWalkthrough.appID],
            allowDevelopment: true,
            trustedRootsFile: rootsFile
        )
        // HTTPS with a development certificate, and a device CA for client certificates.
        // The development certificate is written to files so that the admin listener (the console
        // and the admin API, apart from the apps' origin) serves the same one.
        let tlsFiles = (folder.appendingPathComponent("tls.pem").path, folder.appendingPathComponent("tls.key").path)
        configuration.tls = .init(
            certificateFile: tlsFiles.0,
            keyFile: tlsFiles.1,
            development: true,
            developmentHosts: ["localhost", "127.0.0.1"],
            clientCertificates: true
        )
        configuration.adminListener = .init(
            listen: .init(host: "127.0.0.1", port: 0),
            tls: .init(certificateFile: tlsFiles.0, keyFile: tlsFiles.1, development: true, developmentHosts: ["localhost", "127.0.0.1"])
        )
        configuration.deviceCA = .init(
            certificateFile: folder.appendingPathComponent("device-ca.pem").path,
            keyFile: folder.appendingPathComponent("device-ca.key").path
        )
        // The banking app's password login: Digest with SHA-256, nonces short-lived to show them go stale.
        var passwords = GatewayConfiguration.Passwords(realm: "signet-demo-bank")
        passwords.nonceLifetimeSeconds = 2
        configuration.passwords = passwords
        // 32 random bytes: what a production token should be (at least 32 characters).
        configuration.adminToken = Nonce.random() + Nonce.random()
        let running = try await RunningGateway.start(configuration, logger: logger)
        let base = "https://localhost:\(running.port)"
        let adminBase = "https://localhost:\(running.adminPort!)"
        print("backend (knows nothing of Signet): http://127.0.0.1:\(backendServer.port)")
        print("gateway (SQLite at \(configuration.store.sqlite!)): \(base)")
        let caFile = folder.appendingPathComponent("tls-ca.pem").path
        try Data(try running.gateway.tls!.chain.last!.serializeAsPEM().pemString.utf8).write(to: URL(fileURLWithPath: caFile))
        print("console: \(adminBase)/signet/admin/ (the admin listener; not on the apps' origin)")
        print("admin token: \(configuration.adminToken!)")
        print("TLS CA: \(caFile)")
        print("(they last while the demo runs; --keep-running keeps them)\n")

        let walkthrough = DemoWalkthrough(
            base: base,
            adminBase: adminBase,
            servedChain: running.gateway.tls!.chain,
            gatewayKey: gatewayKey.verificationKey,
            legacySecret: legacySecret,
            simulatorCA: simulatorCA,
            adminToken: configuration.adminToken!,
            nonceLifetime: passwords.nonceLifetimeSeconds!
        )
        do {
            try await walkthrough.run()
        } catch {
            print("demo failed: \(error)")
            try? await running.stop()
            await backendServer.stop()
            throw ExitCode(1)
        }
        if keepRunning {
            print("\nservers keep running; press Ctrl-C to stop")
            let (signals, continuation) = AsyncStream.makeStream(of: Void.self)
            let source = DispatchSource.makeSignalSource(signal: SIGINT)
            signal(SIGINT, SIG_IGN)
            source.setEventHandler { continuation.finish() }
            source.resume()
            for await _ in signals {}
        }
        try await running.stop()
        await backendServer.stop()
    }
}

