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
public final class GatewayHarness: Sendable {
    public let backend: ScoresBackend
    public let backendServer: BackgroundServer
    public let gateways: [RunningGateway]
    public var stores: [any SignetStorage] { gateways.map(\.store) }
    public let gatewayKey: SigningKey
    public let folder: URL
    public static let adminToken = "admin-secret-token-for-the-tests-0123456789"
    public static let appID = "ABCDE12345.dev.signet.scores"
    public static let simulatorCA = try! DevelopmentAttestationCA()
    /// The Android attestation root the harness's gateways trust (`androidAttestation.rootsFile`).
    public static let androidCA = try! DevelopmentAndroidAttestationCA()
    public static let legacySecret = Array("a9bk342nziAFD234".utf8)
    public static let bankSecret = Array("065a62448fb75fce3764dcbe68f9908d".utf8)

    public var base: String { url(0) }
    /// `http://127.0.0.1:PORT`, or `https://localhost:PORT` (the development certificate's name) over TLS.
    public func url(_ gateway: Int) -> String {
        gateways[gateway].gateway.tls == nil
            ? "http://127.0.0.1:\(gateways[gateway].port)" : "https://localhost:\(gateways[gateway].port)"
    }

    /// The first gateway, its store, its port.
    public var gateway: SignetGateway { gateways[0].gateway }
    /// The admin listener of gateway 0, when the configuration has one.
    public var adminBase: String? {
        gateways[0].adminPort.map { "\(gateway.adminTLS == nil ? "http" : "https")://127.0.0.1:\($0)" }
    }
    public var store: any SignetStorage { gateways[0].store }
    public var port: Int { gateways[0].port }

    /// HTTPS with a development certificate and client certificates from the device CA.
    public static let developmentTLS = GatewayConfiguration.TLS(development: true, clientCertificates: true)

    /// The example backend alone, for tests that run `signet serve` as a process in front of it.
    public static func startBackend(logger: Logger) async throws -> (ScoresBackend, BackgroundServer) {
        let backend = ScoresBackend()
        let server = try await BackgroundServer.start(logger: logger) {
            backend.application(logger: logger, onServerRunning: $0)
        }
        return (backend, server)
    }

    public enum StoreKind { case sqlite, postgres(String), memory }

    /// The example backend and `instances` gateways in front of it, sharing one store.
    ///
    /// - Parameters:
    ///   - kind: The store (a SQLite file in the harness's folder by default).
    ///   - instances: Gateways started on the same configuration.
    ///   - tls: Serve HTTPS, with a device CA in the folder (and `/echo` as a `client-certificate`
    ///     route when it asks for client certificates).
    ///   - adjust: Last changes to the configuration.
    public static func start(
        store kind: StoreKind = .sqlite,
        instances: Int = 1,
        tls: GatewayConfiguration.TLS? = nil,
        logger gatewayLogger: Logger? = nil,
        adjust: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-gw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (backend, backendServer) = try await startBackend(logger: logger)
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
            .init(prefix: "/legacy/score", access: .legacyQueryHMAC(keyId: "highscore-legacy")),
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
        // Android Key Attestation under the simulator's root, for the simulated app.
        let androidRootsFile = folder.appendingPathComponent("android-root.pem").path
        try Data(try androidCA.rootPEM.utf8).write(to: URL(fileURLWithPath: androidRootsFile))
        configuration.androidAttestation = .init(
            packageNames: ["com.example.scores"],
            signingDigests: [SimulatedAndroidDevice.developmentSigningDigest.map { String(format: "%02x", $0) }.joined()],
            rootsFile: androidRootsFile
        )
        if let tls {
            configuration.tls = tls
            if tls.clientCertificates == true {
                configuration.routes.insert(.init(prefix: "/echo", access: .clientCertificate), at: 0)
            }
            configuration.deviceCA = .init(
                certificateFile: folder.appendingPathComponent("device-ca.pem").path,
                keyFile: folder.appendingPathComponent("device-ca.key").path
            )
        }
        adjust(&configuration)
        var gateways: [RunningGateway] = []
        do {
            for _ in 0..<instances {
                gateways.append(try await RunningGateway.start(configuration, logger: gatewayLogger ?? logger))
            }
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

    public func stop() async throws {
        for gateway in gateways { try await gateway.stop() }
        await backendServer.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    // MARK: Client side

    public struct Answer: Sendable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:] }
        public var reason: String? { json["reason"] as? String }

        public init(status: Int, headers: HTTPHeaders, body: [UInt8]) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// Sends a SignetCore message as it is (its own URL decides which gateway).
    public static func send(_ message: HTTPMessage, timeout: TimeAmount = .seconds(30)) async throws -> Answer {
        let headers = message.fields.lines.filter { !["host", "content-length"].contains($0.name.lowercased()) }
        return try await send(
            method: message.method!,
            url: message.target!.targetURI,
            headers: headers.map { ($0.name, $0.value) },
            body: message.body,
            timeout: timeout
        )
    }

    public static func send(
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
    public struct Device: Sendable {
        public var key: SigningKey
        public var keyID: String
        public var deviceID: String
        public var algorithm: any SignatureAlgorithm
        public var signer: MessageSigner { MessageSigner(key: key, keyID: keyID, algorithm: algorithm) }

        public init(key: SigningKey, keyID: String, deviceID: String, algorithm: any SignatureAlgorithm) {
            self.key = key
            self.keyID = keyID
            self.deviceID = deviceID
            self.algorithm = algorithm
        }
    }

    public func challenge(gateway: Int = 0) async throws -> String {
        let answer = try await Self.send(method: "POST", url: url(gateway) + "/signet/v1/challenges")
        guard answer.status == 201, let challenge = answer.json["challenge"] as? String else {
            throw HarnessError("challenge: \(answer.status) \(answer.text)")
        }
        return challenge
    }

    public func registration(key: SigningKey, alg: String, challenge: String, signature: [UInt8]? = nil) throws -> [UInt8] {
        let proof = try signature ?? SignatureAlgorithms.standard.require(alg).sign(Array(challenge.utf8), with: key)
        let object: [String: Any] = [
            "challenge": challenge, "alg": alg,
            "publicKey": try JSONSerialization.jsonObject(with: Data(key.verificationKey.jwk.jsonString.utf8)),
            "signature": Base64.urlEncode(proof),
        ]
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    public func register(_ type: KeyType = .p256, gateway: Int = 0) async throws -> Device {
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
    public func attest(_ device: SimulatedAppAttestDevice, gateway: Int = 0) async throws -> Answer {
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

    /// Registers a simulated Android device through `POST /signet/v1/devices/android`, its chain
    /// made for a fresh challenge (or `challenge`), with a Play Integrity token when given.
    public func attestAndroid(
        _ device: SimulatedAndroidDevice,
        challenge given: String? = nil,
        integrityToken: String? = nil,
        integrityTokenType: String? = nil,
        gateway: Int = 0
    ) async throws -> Answer {
        var challenge = given ?? ""
        if given == nil { challenge = try await self.challenge(gateway: gateway) }
        let chain = try device.attest(challenge: Array(challenge.utf8))
        var body: [String: Any] = ["challenge": challenge, "chain": chain.map { Base64.encode($0) }]
        body["integrityToken"] = integrityToken
        body["integrityTokenType"] = integrityTokenType
        return try await Self.send(
            method: "POST",
            url: url(gateway) + "/signet/v1/devices/android",
            headers: [("Content-Type", "application/json")],
            body: Array(try JSONSerialization.data(withJSONObject: body))
        )
    }

    public func scorePost(_ json: String = "{\"name\":\"Gilgamesh\",\"score\":100}", gateway: Int = 0) throws -> HTTPMessage {
        try HTTPMessage.request(
            method: "POST",
            uri: url(gateway) + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array(json.utf8)
        )
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
