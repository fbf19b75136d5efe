// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Crypto
import ExampleScores
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import SignetCore
import SignetMiddleware
import SignetServer
import SignetSimulator
import SignetStore
import Synchronization

/// The example backend and one or more gateways: on loopback, talking real HTTP (`.sockets`), or
/// in this process through Hummingbird's router test framework (`.router`: one gateway, no
/// socket, the backend behind a ``RecordingUpstream`` that records what the gateway forwarded).
///
/// Router tests and live tests send the same way (``send(method:url:headers:body:timeout:client:)``,
/// ``register(_:gateway:)``…): a router harness's URLs (`http://localhost:N`) lead to its
/// in-process gateway (``InProcessApplication``), from 127.0.0.1 as on loopback.
public final class GatewayHarness: Sendable {
    public let backend: ScoresBackend
    public let backendServer: Backend
    public let gateways: [Instance]
    /// What the gateway forwarded, in a router harness.
    package let upstream: RecordingUpstream?
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
    /// `http://127.0.0.1:PORT`, or `https://localhost:PORT` (the development certificate's name) over
    /// TLS; `http://localhost:N` in a router harness.
    public func url(_ gateway: Int) -> String {
        if let authority = gateways[gateway].inProcessAuthority { return "http://" + authority }
        return gateways[gateway].gateway.tls == nil
            ? "http://127.0.0.1:\(gateways[gateway].port)" : "https://localhost:\(gateways[gateway].port)"
    }

    /// How the harness's gateways are reached.
    public enum Transport: Sendable {
        /// Real HTTP on loopback (TLS, PROXY protocol, several instances, interop peers).
        case sockets
        /// In this process, through Hummingbird's `.router` test framework.
        case router
    }

    /// One gateway of the harness: serving on loopback, or in this process.
    public final class Instance: Sendable {
        public let gateway: SignetGateway
        public var store: any SignetStorage { gateway.store }
        public let reloader: GatewayReloader
        private let running: RunningGateway?
        private let inProcess: (app: InProcessApplication, admin: InProcessApplication?, authority: String, adminAuthority: String?)?
        /// The port it bound; a live gateway's only.
        public var port: Int { running?.port ?? 0 }
        public var adminPort: Int? { running?.adminPort }
        public var authorizationPort: Int? { running?.authorizationPort }
        public var authorizationGRPCPort: Int? { running?.authorizationGRPCPort }
        var inProcessAuthority: String? { inProcess?.authority }
        var inProcessAdminAuthority: String? { inProcess?.adminAuthority }

        init(_ running: RunningGateway) {
            self.running = running
            gateway = running.gateway
            reloader = running.reloader
            inProcess = nil
        }

        init(gateway: SignetGateway, reloader: GatewayReloader, app: InProcessApplication, admin: InProcessApplication?, authority: String, adminAuthority: String?) {
            self.gateway = gateway
            self.reloader = reloader
            running = nil
            inProcess = (app, admin, authority, adminAuthority)
        }

        public func stop() async throws {
            if let running { return try await running.stop() }
            guard let inProcess else { return }
            InProcessRegistry.remove(inProcess.authority)
            if let admin = inProcess.adminAuthority { InProcessRegistry.remove(admin) }
            await inProcess.admin?.stop()
            await inProcess.app.stop()
            try await gateway.store.shutdown()
        }
    }

    /// The example backend: on loopback, or in this process behind the recording upstream.
    public final class Backend: Sendable {
        private let server: BackgroundServer?
        private let inProcess: InProcessApplication?
        private let upstream: RecordingUpstream?
        private let stopped = Mutex(false)
        public var port: Int { server?.port ?? 0 }

        init(_ server: BackgroundServer) {
            self.server = server
            inProcess = nil
            upstream = nil
        }

        init(_ inProcess: InProcessApplication, behind upstream: RecordingUpstream) {
            server = nil
            self.inProcess = inProcess
            self.upstream = upstream
        }

        /// Stops it: the gateway then finds no upstream (`upstream_unreachable`).
        public func stop() async {
            stopped.withLock { $0 = true }
            upstream?.answerProbes(.unreachable)
            await server?.stop()
            await inProcess?.stop()
        }

        /// The backend's answer to a forwarded request, in a router harness.
        func relay(_ request: HTTPRequest, body: ByteBuffer?) async throws -> UpstreamResponse {
            guard let inProcess, !stopped.withLock({ $0 }) else { throw UpstreamFailure.unreachable }
            let answer = try await inProcess.execute(
                method: request.method,
                authority: request.authority ?? "scores.test",
                target: request.path ?? "/",
                fields: request.headerFields,
                body: body
            )
            var head = answer.head
            head.headerFields[.contentLength] = String(answer.body.readableBytes)
            return UpstreamResponse(head: head, body: answer.body)
        }
    }

    /// The first gateway, its store, its port.
    public var gateway: SignetGateway { gateways[0].gateway }
    /// The admin listener of gateway 0, when the configuration has one.
    public var adminBase: String? {
        if let authority = gateways[0].inProcessAdminAuthority { return "http://" + authority }
        return gateways[0].adminPort.map { "\(gateway.adminTLS == nil ? "http" : "https")://127.0.0.1:\($0)" }
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
    ///   - transport: Sockets on loopback, or in this process (``Transport/router``).
    ///   - upstreamOrigin: A router harness's upstream (the backend, behind ``upstream``).
    ///   - clock: The time a router harness's gateway reads; the real one by default.
    ///   - adjust: Last changes to the configuration.
    public static func start(
        store kind: StoreKind = .sqlite,
        instances: Int = 1,
        tls: GatewayConfiguration.TLS? = nil,
        logger gatewayLogger: Logger? = nil,
        transport: Transport = .sockets,
        upstreamOrigin: String = "http://scores.test",
        clock: ManualClock? = nil,
        adjust: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        precondition(clock == nil || transport == .router, "only a router harness's gateway takes a clock")
        precondition(transport == .sockets || (instances == 1 && tls == nil), "a router harness is one gateway, without TLS")
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-gw-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let backend = ScoresBackend()
        let backendServer: Backend
        let upstream: RecordingUpstream?
        if transport == .router {
            let recording = try RecordingUpstream(origin: upstreamOrigin)
            backendServer = Backend(try await InProcessApplication.start(backend.application(logger: logger)), behind: recording)
            recording.answerEveryRequest(.relay { [backendServer] in try await backendServer.relay($0, body: $1) })
            upstream = recording
        } else {
            backendServer = Backend(try await BackgroundServer.start(logger: logger) { backend.application(logger: logger, onServerRunning: $0) })
            upstream = nil
        }
        let gatewayKey = try SigningKey.generate(.ed25519)
        let keyFile = folder.appendingPathComponent("gateway.key.pem").path
        try Data(gatewayKey.pemRepresentation!.utf8).write(to: URL(fileURLWithPath: keyFile))
        var configuration = GatewayConfiguration(upstream: upstream == nil ? "http://127.0.0.1:\(backendServer.port)" : upstreamOrigin)
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
        // A development gateway: only one takes the simulator's roots, App Attest's (the only
        // trusted root) and Android's below.
        configuration.development = true
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
        var gateways: [Instance] = []
        do {
            if let upstream {
                gateways.append(try await inProcess(configuration, upstream: upstream, clock: clock?.read ?? Date.init, logger: gatewayLogger ?? logger))
            } else {
                for index in 0..<instances {
                    // Several instances go by names of their own, as behind a balancer.
                    var own = configuration
                    if instances > 1, own.instance == nil { own.instance = "instance-\(index)" }
                    gateways.append(Instance(try await RunningGateway.start(own, logger: gatewayLogger ?? logger)))
                }
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
            upstream: upstream,
            gatewayKey: gatewayKey,
            folder: folder
        )
    }

    /// A gateway in this process, in front of `upstream`, reached at `http://localhost:N`.
    private static func inProcess(
        _ configuration: GatewayConfiguration,
        upstream: RecordingUpstream,
        clock: @escaping @Sendable () -> Date,
        logger: Logger
    ) async throws -> Instance {
        let authority = InProcessRegistry.newAuthority()
        try configuration.validate()
        try configuration.checkFiles()
        let store = try await configuration.store.open(logger: logger)
        do {
            let gateway = try SignetGateway(configuration: configuration, store: store, logger: logger, clock: clock, upstream: upstream)
            let reloader = GatewayReloader(onHangup: false, logger: logger)
            let admin = configuration.adminListener == nil ? nil : try await InProcessApplication.start(gateway.adminApplication(reloads: reloader))
            let app = try await InProcessApplication.start(gateway.application(reloads: reloader))
            let adminAuthority = admin.map { InProcessRegistry.add($0) }
            InProcessRegistry.add(app, at: authority)
            return Instance(gateway: gateway, reloader: reloader, app: app, admin: admin, authority: authority, adminAuthority: adminAuthority)
        } catch {
            try? await store.shutdown()
            throw error
        }
    }

    private init(
        backend: ScoresBackend,
        backendServer: Backend,
        gateways: [Instance],
        upstream: RecordingUpstream?,
        gatewayKey: SigningKey,
        folder: URL
    ) {
        self.backend = backend
        self.backendServer = backendServer
        self.upstream = upstream
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

    /// `GET url` (a `/readyz`) until it answers `200`, for at most `within`; the last answer.
    ///
    /// The test process runs every gateway's SQLite on one NIO thread pool: under the whole suite a
    /// store's ping can wait behind other gateways' work past the probe's 2 s, and `/readyz` then
    /// rightly says the store did not answer (seen twice in full runs, never alone). A balancer asks
    /// again; so does this.
    public static func readiness(_ url: String, within: Duration = .seconds(10)) async throws -> Answer {
        let deadline = ContinuousClock.now + within
        while true {
            let answer = try await send(method: "GET", url: url)
            if answer.status == 200 || ContinuousClock.now >= deadline { return answer }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    public static func send(
        method: String,
        url: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        timeout: TimeAmount = .seconds(30),
        client: HTTPClient = .shared
    ) async throws -> Answer {
        if let (app, authority, target) = InProcessRegistry.find(url) {
            let sendsBody = body.map { !$0.isEmpty || method == "POST" } ?? false
            let answer = try await app.execute(
                method: HTTPRequest.Method(method)!,
                authority: authority,
                target: target,
                fields: try fields(headers),
                body: sendsBody ? ByteBuffer(bytes: body ?? []) : nil
            )
            return Self.answer(answer.head, answer.body)
        }
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body, !body.isEmpty || method == "POST" { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 4 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Array(buffer: bytes))
    }

    /// A request to a router harness's gateway exactly as given — the target's bytes (dot-segments,
    /// escapes and all), the fields in any spelling, the authority `Host` names — as a client
    /// writes it on the wire, without a socket.
    public func sendAsWritten(
        _ method: String,
        _ target: String,
        fields: [(String, String)] = [],
        body: [UInt8]? = nil,
        authority: String? = nil,
        gateway: Int = 0
    ) async throws -> Answer {
        guard let (app, own, _) = InProcessRegistry.find(url(gateway)) else { throw HarnessError("sendAsWritten needs a router harness") }
        let answer = try await app.execute(
            method: HTTPRequest.Method(method)!,
            authority: authority ?? own,
            target: target,
            fields: try Self.fields(fields),
            body: body.map { ByteBuffer(bytes: $0) }
        )
        return Self.answer(answer.head, answer.body)
    }

    /// A request to a router harness's gateway whose head goes now and whose body follows when the
    /// test sends it (``HeldRequest``).
    package func openAsWritten(
        _ method: String,
        _ target: String,
        fields: [(String, String)],
        gateway: Int = 0
    ) throws -> HeldRequest {
        guard let (app, authority, _) = InProcessRegistry.find(url(gateway)) else { throw HarnessError("openAsWritten needs a router harness") }
        return app.open(method: HTTPRequest.Method(method)!, authority: authority, target: target, fields: try Self.fields(fields))
    }

    /// Header fields as a test writes them, by name and value.
    static func fields(_ pairs: [(String, String)]) throws -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs {
            guard let name = HTTPField.Name(name) else { throw HarnessError("\(name) is not a field name") }
            fields.append(HTTPField(name: name, value: value))
        }
        return fields
    }

    /// An answer of the in-process gateway, as ``Answer``.
    package static func answer(_ head: HTTPResponse, _ body: ByteBuffer) -> Answer {
        var headers = HTTPHeaders()
        for field in head.headerFields { headers.add(name: field.name.rawName, value: field.value) }
        return Answer(status: head.status.code, headers: headers, body: Array(body.readableBytesView))
    }

    /// The authority a router harness's gateway is reached at (`localhost:N`).
    public var authority: String { String(base.dropFirst("http://".count)) }

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

/// The router harnesses' in-process applications, by the authority their URLs name
/// (`localhost:N`): how ``GatewayHarness/send(method:url:headers:body:timeout:client:)`` reaches them.
enum InProcessRegistry {
    private static let state = Mutex<(next: Int, apps: [String: InProcessApplication])>((1, [:]))

    static func newAuthority() -> String {
        state.withLock { state in
            defer { state.next += 1 }
            return "localhost:\(state.next)"
        }
    }

    @discardableResult
    static func add(_ app: InProcessApplication, at authority: String? = nil) -> String {
        let authority = authority ?? newAuthority()
        state.withLock { $0.apps[authority] = app }
        return authority
    }

    static func remove(_ authority: String) {
        _ = state.withLock { $0.apps.removeValue(forKey: authority) }
    }

    /// The application `url` names, its authority, and the request target (path and query).
    static func find(_ url: String) -> (InProcessApplication, String, String)? {
        guard url.hasPrefix("http://localhost:") else { return nil }
        let rest = url.dropFirst("http://".count)
        let authority = String(rest.prefix { $0 != "/" && $0 != "?" })
        guard let app = state.withLock({ $0.apps[authority] }) else { return nil }
        let target = String(rest.dropFirst(authority.count))
        return (app, authority, target.isEmpty ? "/" : (target.hasPrefix("?") ? "/" + target : target))
    }
}
