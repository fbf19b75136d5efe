// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Crypto
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

/// The example backend and one or more gateways on loopback, talking real HTTP.
final class GatewayHarness: Sendable {
    let backend: ScoresBackend
    let backendServer: BackgroundServer
    let gateways: [RunningGateway]
    var stores: [any SignetStorage] { gateways.map(\.store) }
    let gatewayKey: SigningKey
    let folder: URL
    static let adminToken = "admin-secret-token"
    static let appID = "ABCDE12345.dev.signet.scores"
    static let simulatorCA = try! DevelopmentAttestationCA()
    static let legacySecret = Array("a9bk342nziAFD234".utf8)
    static let bankSecret = Array("065a62448fb75fce3764dcbe68f9908d".utf8)

    var base: String { url(0) }
    func url(_ gateway: Int) -> String { "http://127.0.0.1:\(gateways[gateway].port)" }

    enum StoreKind { case sqlite, postgres(String), memory }

    static func start(
        store kind: StoreKind = .sqlite,
        instances: Int = 1,
        adjust: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-gw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let backend = ScoresBackend()
        let backendServer = try await BackgroundServer.start(logger: logger) {
            backend.application(logger: logger, onServerRunning: $0)
        }
        let gatewayKey = try SigningKey.generate(.ed25519)
        let keyFile = folder.appendingPathComponent("gateway.key.pem").path
        try Data(gatewayKey.pemRepresentation!.utf8).write(to: URL(fileURLWithPath: keyFile))
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:\(backendServer.port)")
        configuration.listen.port = 0
        switch kind {
        case .sqlite: configuration.store = .sqlite(folder.appendingPathComponent("signet.sqlite").path)
        case .postgres(let url): configuration.store = .postgres(url)
        case .memory: configuration.store = .memory
        }
        configuration.routes = [
            .init(prefix: "/scores/top", methods: ["GET"], access: .open),
            .init(prefix: "/legacy/score", access: .legacyQueryHMAC, keyId: "highscore-legacy"),
            .init(prefix: "/attested", access: .appAttest),
            .init(prefix: "/", access: .verified),
        ]
        configuration.sharedSecrets = [
            .init(keyId: "highscore-legacy", secretBase64: Base64.encode(legacySecret)),
            .init(keyId: "bank-v1", secretBase64: Base64.encode(bankSecret)),
        ]
        configuration.responseSigning = .init(keyFile: keyFile, keyId: "gateway")
        configuration.adminToken = adminToken
        configuration.debug = true
        // App Attest with the simulator's CA as the (only) trusted root, as in development.
        let rootsFile = folder.appendingPathComponent("simulator-root.pem").path
        try Data(try simulatorCA.rootPEM.utf8).write(to: URL(fileURLWithPath: rootsFile))
        configuration.appAttest = .init(appIDs: [appID], allowDevelopment: true, trustedRootsFile: rootsFile)
        adjust(&configuration)
        var gateways: [RunningGateway] = []
        do {
            for _ in 0..<instances { gateways.append(try await RunningGateway.start(configuration, logger: logger)) }
        } catch {
            // A refused configuration must not leave anything running behind the failed test.
            for gateway in gateways { try? await gateway.stop() }
            await backendServer.stop()
            throw error
        }
        return GatewayHarness(
            backend: backend,
            backendServer: backendServer,
            gateways: gateways,
            gatewayKey: gatewayKey,
            folder: folder
        )
    }

    private init(
        backend: ScoresBackend,
        backendServer: BackgroundServer,
        gateways: [RunningGateway],
        gatewayKey: SigningKey,
        folder: URL
    ) {
        self.backend = backend
        self.backendServer = backendServer
        self.gateways = gateways
        self.gatewayKey = gatewayKey
        self.folder = folder
    }

    func stop() async throws {
        for gateway in gateways { try await gateway.stop() }
        await backendServer.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    // MARK: Client side

    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:] }
        var reason: String? { json["reason"] as? String }
    }

    /// Sends a SignetCore message as it is (its own URL decides which gateway).
    static func send(_ message: HTTPMessage, timeout: TimeAmount = .seconds(30)) async throws -> Answer {
        let headers = message.fields.lines.filter { !["host", "content-length"].contains($0.name.lowercased()) }
        return try await send(
            method: message.method!,
            url: message.target!.targetURI,
            headers: headers.map { ($0.name, $0.value) },
            body: message.body,
            timeout: timeout
        )
    }

    static func send(
        method: String,
        url: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body, !body.isEmpty || method == "POST" { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 4 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Array(buffer: bytes))
    }

    /// A registered device: its key, key id and device id.
    struct Device: Sendable {
        var key: SigningKey
        var keyID: String
        var deviceID: String
        var algorithm: any SignatureAlgorithm
        var signer: MessageSigner { MessageSigner(key: key, keyID: keyID, algorithm: algorithm) }
    }

    func challenge(gateway: Int = 0) async throws -> String {
        let answer = try await Self.send(method: "POST", url: url(gateway) + "/signet/v1/challenges")
        guard answer.status == 201, let challenge = answer.json["challenge"] as? String else {
            throw HarnessError("challenge: \(answer.status) \(answer.text)")
        }
        return challenge
    }

    func registration(key: SigningKey, alg: String, challenge: String, signature: [UInt8]? = nil) throws -> [UInt8] {
        let proof = try signature ?? SignatureAlgorithms.standard.require(alg).sign(Array(challenge.utf8), with: key)
        let object: [String: Any] = [
            "challenge": challenge, "alg": alg,
            "publicKey": try JSONSerialization.jsonObject(with: Data(key.verificationKey.jwk.jsonString.utf8)),
            "signature": Base64.urlEncode(proof),
        ]
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    func register(_ type: KeyType = .p256, gateway: Int = 0) async throws -> Device {
        let key = try SigningKey.generate(type)
        let alg = type == .p256 ? "ecdsa-p256-sha256" : "ed25519"
        let body = try registration(key: key, alg: alg, challenge: try await challenge(gateway: gateway))
        let answer = try await Self.send(
            method: "POST",
            url: url(gateway) + "/signet/v1/devices",
            headers: [("Content-Type", "application/json")],
            body: body
        )
        guard answer.status == 201, let keyID = answer.json["keyid"] as? String,
            let deviceID = answer.json["deviceId"] as? String
        else { throw HarnessError("register: \(answer.status) \(answer.text)") }
        return Device(
            key: key,
            keyID: keyID,
            deviceID: deviceID,
            algorithm: try SignatureAlgorithms.standard.require(alg)
        )
    }

    /// Attests a simulated device through `POST /signet/v1/devices/attest`; returns its device id.
    func attest(_ device: SimulatedAppAttestDevice, gateway: Int = 0) async throws -> Answer {
        let challenge = try await challenge(gateway: gateway)
        let attestation = try device.attest(clientDataHash: Array(SHA256.hash(data: Array(challenge.utf8))))
        let body: [String: Any] = [
            "keyId": device.keyID, "attestation": Base64.encode(attestation), "challenge": challenge,
        ]
        return try await Self.send(
            method: "POST",
            url: url(gateway) + "/signet/v1/devices/attest",
            headers: [("Content-Type", "application/json")],
            body: Array(try JSONSerialization.data(withJSONObject: body))
        )
    }

    func scorePost(_ json: String = "{\"name\":\"Gilgamesh\",\"score\":100}", gateway: Int = 0) throws -> HTTPMessage {
        try HTTPMessage.request(
            method: "POST",
            uri: url(gateway) + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array(json.utf8)
        )
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The PostgreSQL server `scripts/test.sh` starts; CI must have one. Tests needing it are skipped
/// (never silently in CI) when it is absent.
enum TestPostgres {
    static let url: String? = {
        if let url = ProcessInfo.processInfo.environment["SIGNET_POSTGRES_URL"], !url.isEmpty { return url }
        precondition(ProcessInfo.processInfo.environment["CI"] == nil, "CI must provide SIGNET_POSTGRES_URL")
        return nil
    }()
}
