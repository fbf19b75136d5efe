// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import Logging
import SignetClient
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SwiftASN1

/// The example backend behind a gateway that speaks HTTPS with a development certificate, takes
/// client certificates from its device CA, and signs its responses.
final class TLSGateway: Sendable {
    let backendServer: BackgroundServer
    let running: RunningGateway
    var gateway: SignetGateway { running.gateway }
    var store: any SignetStorage { running.store }
    let responseKey: SigningKey
    let folder: URL
    static let adminToken = "tls-admin-token"

    var port: Int { running.port }
    var base: String { "https://localhost:\(port)" }

    private init(
        backendServer: BackgroundServer,
        running: RunningGateway,
        responseKey: SigningKey,
        folder: URL
    ) {
        self.backendServer = backendServer
        self.running = running
        self.responseKey = responseKey
        self.folder = folder
    }

    /// - Parameters:
    ///   - tls: the gateway's TLS settings; a development certificate when `nil`.
    ///   - adjust: last changes to the configuration.
    static func start(
        tls: GatewayConfiguration.TLS? = nil,
        adjust: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> TLSGateway {
        var logger = Logger(label: "signet.test.gateway")
        logger.logLevel = .critical
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let backend = ScoresBackend()
        let backendServer = try await BackgroundServer.start(logger: logger) {
            backend.application(logger: logger, onServerRunning: $0)
        }
        let responseKey = try SigningKey.generate(.ed25519)
        let keyFile = folder.appendingPathComponent("gateway.key.pem").path
        try Data(responseKey.pemRepresentation!.utf8).write(to: URL(fileURLWithPath: keyFile))
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:\(backendServer.port)")
        configuration.listen.port = 0
        configuration.store = .sqlite(folder.appendingPathComponent("signet.sqlite").path)
        configuration.routes = [
            .init(prefix: "/scores/top", methods: ["GET"], access: .open),
            .init(prefix: "/echo", access: .clientCertificate),
            .init(prefix: "/", access: .verified),
        ]
        configuration.responseSigning = .init(keyFile: keyFile, keyId: "gateway")
        configuration.adminToken = adminToken
        configuration.tls = tls ?? .init(development: true, clientCertificates: true)
        configuration.deviceCA = .init(
            certificateFile: folder.appendingPathComponent("device-ca.pem").path,
            keyFile: folder.appendingPathComponent("device-ca.key").path
        )
        adjust(&configuration)
        let running: RunningGateway
        do {
            running = try await RunningGateway.start(configuration, logger: logger)
        } catch {
            // A refused configuration must not leave the backend running behind the failed test.
            await backendServer.stop()
            throw error
        }
        return TLSGateway(
            backendServer: backendServer,
            running: running,
            responseKey: responseKey,
            folder: folder
        )
    }

    /// A client that trusts the served chain's last certificate and pins the chain (and a backup).
    func client(identity: ClientIdentity? = nil, obliviousKeys: [OHTTPKeyConfiguration] = []) throws -> SignetClient {
        let chain = try require(gateway.tls).chain
        // The served chain's pins plus a backup, as a real pin set has.
        let pins = try Set(chain.map { try SPKIPin(certificateDER: $0.serializeAsPEM().derBytes) } + [backupPin()])
        var configuration = SignetClientConfiguration(
            origins: [try Origin(base)],
            trust: ServerTrustEvaluator(
                roots: .only([chain.last!]),
                pinSets: [try PinSet(pattern: try HostPattern("localhost"), pins: pins)]
            ),
            clientIdentity: identity,
            responseKeys: KeyRing([KeyRecord(keyID: "gateway", algorithm: "ed25519", key: responseKey.verificationKey)]),
            timeout: .seconds(10)
        )
        configuration.obliviousKeys = obliviousKeys
        return try SignetClient(configuration: configuration)
    }

    func stop() async throws {
        try await running.stop()
        await backendServer.stop()
    }
}

struct MissingValue: Error {}

func require<T>(_ value: T?) throws -> T {
    guard let value else { throw MissingValue() }
    return value
}
