// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SignetCore
import SignetTrust

/// The Signet client SDK: pinned HTTPS to configured origins, signed requests, device registration,
/// verified responses and pin failure reports.
///
/// ```swift
/// let client = try SignetClient(configuration: .init(
///     origins: [try Origin("https://api.example.com")],
///     trust: ServerTrustEvaluator(pinSets: [pins])))
/// try await client.register(using: SoftwareKeyProvider())
/// let answer = try await client.send("POST", "https://api.example.com/scores", body: Array(json.utf8))
/// ```
public actor SignetClient {
    public let configuration: SignetClientConfiguration
    private let group: any EventLoopGroup
    private var tlsContext: NIOSSLContext
    private var connections: [Origin: HTTP1Connection] = [:]
    private var connecting: [Origin: Task<HTTP1Connection, any Error>] = [:]
    /// The signer used for requests (set by `register(using:)` or ``useSigner(_:)``).
    public private(set) var signer: (any RequestSigning)?
    /// The device registered by `register(using:)`.
    public private(set) var device: RegisteredDevice?
    /// Pin failure reports not yet delivered (TrustKit/HPKP JSON).
    public internal(set) var pendingPinReports: [[UInt8]] = []
    /// The last pin evaluation per origin, for apps that want to see `needsRefresh`.
    public internal(set) var lastPinEvaluation: [Origin: PinEvaluation] = [:]
    let clock: @Sendable () -> Date
    /// The Oblivious HTTP key configurations in use: the configured ones, then the gateway's latest.
    public internal(set) var obliviousKeys: [OHTTPKeyConfiguration]
    /// The chain and pin checks new connections pass: the configured ones, with the pin sets of the
    /// trust document in force once one is.
    public internal(set) var trust: ServerTrustEvaluator
    /// The keys gateway response signatures are checked with: the configured ones, or those of the
    /// trust document in force when it names any.
    public internal(set) var responseKeys: KeyRing?
    /// The pin sets and response keys in force, for the app's own `URLSession`
    /// (`SignetURLSessionDelegate`) and ``ResponseSignatureVerifier``: updated with ``trust`` and
    /// ``responseKeys``.
    public nonisolated let liveTrust: LiveTrust
    /// The signed trust document in force, once ``loadTrust()`` or ``updateTrust(origin:)`` ran.
    public internal(set) var trustDocument: TrustDocument?
    /// Why the last accepted trust document could not be stored (it applies all the same, until the
    /// app restarts); `nil` after one is stored.
    public internal(set) var trustStoreFailure: SignetError?
    var trustKeys: TrustKeys?
    /// The user's password, for servers that ask for one (``usePassword(_:)``).
    var password: PasswordCredentials?
    var digestSessions: [Origin: DigestSession] = [:]
    /// Cached app tokens, and fetches under way (concurrent requests share one).
    var appTokens: [Origin: AppToken] = [:]
    var appTokenFetches: [Origin: Task<AppToken, any Error>] = [:]

    public init(
        configuration: SignetClientConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        clock: @escaping @Sendable () -> Date = Date.init
    ) throws {
        guard !configuration.origins.isEmpty else {
            throw SignetError(.originNotAllowed, "configure at least one origin")
        }
        self.configuration = configuration
        self.group = eventLoopGroup
        self.clock = clock
        self.tlsContext = try Self.makeTLSContext(identity: configuration.clientIdentity)
        self.obliviousKeys = configuration.obliviousKeys
        self.trust = configuration.trust
        self.responseKeys = configuration.responseKeys
        self.liveTrust = LiveTrust(pinSets: configuration.trust.pinSets, responseKeys: configuration.responseKeys)
    }

    /// Uses `signer` for every later request.
    public func useSigner(_ signer: any RequestSigning) {
        self.signer = signer
    }

    /// Presents this client certificate on new connections (mutual TLS); open connections close.
    public func useClientIdentity(_ identity: ClientIdentity?) throws {
        tlsContext = try Self.makeTLSContext(identity: identity)
        for connection in connections.values { connection.close() }
        connections = [:]
    }

    // MARK: Requests

    /// Sends a request to `url`, signed when a signer is set, following redirects within the
    /// configured origins only.
    public func send(
        _ method: String,
        _ url: String,
        fields: MessageFields = [],
        body: [UInt8] = [],
        sign: Bool = true
    ) async throws -> ClientResponse {
        var message = try HTTPMessage.request(method: method, uri: url, fields: fields, body: body)
        if sign, let target = message.target, usesAppToken(target) {
            return try await sendWithAppToken(method, url, to: try allowedOrigin(target), fields: fields, body: body)
        }
        for redirect in 0...configuration.maximumRedirects {
            var (response, digest) = try await transmit(
                message,
                authorization: try preemptiveAuthorization(for: message, signed: sign && signer != nil),
                sign: sign
            )
            // A password challenge is answered once, and a stale nonce (the password was right, the
            // nonce too old) once more: never a loop, never the user asked again.
            var answered = 0
            while response.status == 401, answered == 0 || Self.isStale(response), answered < 2,
                let answer = try authorization(answering: response, for: message)
            {
                (response, digest) = try await transmit(message, authorization: answer, sign: sign)
                answered += 1
            }
            try checkServerProof(response, digest: digest)
            guard [301, 302, 303, 307, 308].contains(response.status),
                let location = response.fields["location"]
            else { return response }
            guard redirect < configuration.maximumRedirects else {
                throw SignetError(.connectionFailed, "more than \(configuration.maximumRedirects) redirects")
            }
            // The next hop must be a configured origin too; checked before anything is sent there.
            let next = try Self.resolve(location, against: message.target!)
            _ = try allowedOrigin(next)
            let keepMethod = response.status == 307 || response.status == 308
            message = HTTPMessage(
                head: .request(method: keepMethod ? message.method! : (message.method == "HEAD" ? "HEAD" : "GET"), target: next),
                fields: keepMethod
                    ? fields : MessageFields(fields.lines.filter { !["content-type", "content-digest"].contains($0.name.lowercased()) }),
                body: keepMethod ? body : []
            )
        }
        throw SignetError(.connectionFailed, "redirect loop")
    }

    /// Signs (when asked and a signer is set) and sends `message` with a password `authorization`.
    private func transmit(
        _ message: HTTPMessage,
        authorization: (String, DigestCredentials?)?,
        sign: Bool
    ) async throws -> (ClientResponse, DigestCredentials?) {
        var message = message
        if let (value, _) = authorization { message.fields.set(name: "Authorization", value: value) }
        let signed = sign && signer != nil ? try await signer!.sign(message, now: clock()) : message
        return (try await transmit(signed), authorization?.1)
    }

    /// Sends `message` exactly as given (already signed, or deliberately unsigned). The origin
    /// check still applies.
    public func transmit(_ message: HTTPMessage) async throws -> ClientResponse {
        guard let target = message.target, let method = message.method else {
            throw SignetError(.malformedMessage, "not a request")
        }
        let origin = try allowedOrigin(target)
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: Self.originForm(target))
        head.headers.add(name: "Host", value: target.authority)
        for line in message.fields.lines where !["host", "content-length", "connection"].contains(line.name.lowercased()) {
            head.headers.add(name: line.name, value: line.value)
        }
        if !message.body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
            head.headers.add(name: "Content-Length", value: String(message.body.count))
        }
        configuration.logger.debug("request", metadata: ["method": "\(method)", "origin": "\(origin)", "path": "\(target.pathValue)"])
        let raw = try await execute(origin: origin, head: head, body: message.body)
        configuration.logger.debug("answer", metadata: ["status": "\(raw.head.status.code)", "origin": "\(origin)"])
        var fields = MessageFields()
        for header in raw.head.headers { fields.append(name: header.name, value: header.value) }
        var response = ClientResponse(status: Int(raw.head.status.code), fields: fields, body: raw.body)
        response.signature = try await verifyResponseSignature(response, request: message)
        await deliverPinReports()
        return response
    }

    func execute(origin: Origin, head: HTTPRequestHead, body: [UInt8]) async throws -> HTTP1Connection.RawResponse {
        // A kept-alive connection the server has closed meanwhile fails before any answer: retry
        // once on a fresh one. A signed request carries a nonce, so one that did arrive the first
        // time is refused as a replay, never applied twice. Fresh connections are not retried.
        var retried = false
        while true {
            let (connection, reused) = try await connection(to: origin)
            do {
                return try await withTimeout(configuration.timeout) {
                    try await connection.execute(head: head, body: body)
                }
            } catch let error as SignetError where error.code == .connectionFailed && reused && !retried {
                configuration.logger.debug("kept-alive connection closed; retrying once", metadata: ["origin": "\(origin)"])
                drop(connection, for: origin)
                retried = true
            } catch let error as SignetError where error.code == .requestTimeout {
                // The connection closed itself if the request had gone out; one still queued
                // leaves it to the requests sharing it.
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                connection.abort()
                if connections[origin] === connection { connections[origin] = nil }
                throw error
            }
        }
    }

    /// Closes every kept-alive connection (an app going to the background; a test stopping its
    /// server); the next request opens a new one, checked against the trust in force then.
    public func closeConnections() {
        for connection in connections.values { connection.close() }
        connections = [:]
    }

    private func drop(_ connection: HTTP1Connection, for origin: Origin) {
        connection.close()
        if connections[origin] === connection { connections[origin] = nil }
    }

    /// The open connection to `origin`, or a new one; concurrent callers share one connect.
    func connection(to origin: Origin) async throws -> (HTTP1Connection, reused: Bool) {
        if let existing = connections[origin], !existing.isClosed { return (existing, true) }
        if let pending = connecting[origin] { return (try await pending.value, false) }
        let trust = self.trust
        let now = clock
        let tls = origin.isTLS ? tlsContext : nil
        let group = self.group
        let maximumResponseBytes = configuration.maximumResponseBytes
        let task = Task {
            try await HTTP1Connection.connect(
                origin: origin,
                tls: tls,
                group: group,
                maximumResponseBytes: maximumResponseBytes
            ) { [weak self] chain in
                let result = await trust.evaluate(servedChain: chain, host: origin.host, port: origin.port, now: now())
                if let evaluation = result.pins { await self?.record(evaluation, for: origin) }
                return result.error
            }
        }
        connecting[origin] = task
        defer { connecting[origin] = nil }
        let connection = try await task.value
        connections[origin] = connection
        configuration.logger.debug("connected", metadata: ["origin": "\(origin)"])
        return (connection, false)
    }

    // MARK: Registration

    /// Challenge → registration (with `provider`'s proof) → the signer for later requests.
    @discardableResult
    public func register(using provider: any AttestationProvider, origin: Origin? = nil) async throws
        -> RegisteredDevice
    {
        let base = (origin ?? configuration.origins[0]).description
        let challenge = try await send("POST", base + "/signet/v1/challenges", sign: false)
        guard challenge.status == 201, let value = challenge.json?["challenge"] as? String else {
            throw SignetError(.malformedMessage, "no challenge: \(challenge.status) \(challenge.text)")
        }
        let registration = try await provider.registration(challenge: value)
        let answer = try await send(
            "POST",
            base + registration.path,
            fields: [("Content-Type", "application/json")],
            body: registration.body,
            sign: false
        )
        guard answer.status == 201, let object = answer.json, let deviceID = object["deviceId"] as? String,
            let keyID = object["keyid"] as? String
        else {
            throw SignetError(
                answer.reason.flatMap(SignetError.Code.init(rawValue:)) ?? .registrationFailed,
                "registration refused: \(answer.status) \(answer.text)"
            )
        }
        var registered = RegisteredDevice(
            deviceID: deviceID,
            keyID: keyID,
            certificateChainPEM: object["certificate"] as? String
        )
        registered.user = object["user"] as? String
        signer = try await provider.signer(for: registered)
        device = registered
        configuration.logger.debug("registered", metadata: ["device": "\(deviceID)", "keyid": "\(keyID)"])
        return registered
    }

    // MARK: Helpers

    func allowedOrigin(_ target: RequestTarget) throws -> Origin {
        let origin = try Origin(target: target)
        guard configuration.origins.contains(origin) else {
            throw SignetError(.originNotAllowed, "\(origin) is not a configured origin; nothing was sent")
        }
        return origin
    }

    func verifyResponseSignature(_ response: ClientResponse, request: HTTPMessage) async throws
        -> VerifiedSignature?
    {
        guard let keys = responseKeys else { return nil }
        guard response.fields.contains("signature") else {
            if configuration.requireSignedResponses {
                throw SignetError(.responseSignatureInvalid, "the response is not signed")
            }
            return nil
        }
        let message = HTTPMessage.response(status: response.status, fields: response.fields, body: response.body)
        return try await ResponseSignatureVerifier(keys: keys).verify(message, for: request, now: clock())
    }

    static func makeTLSContext(identity: ClientIdentity?) throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.verifySignatureAlgorithms = TLSConfiguration.signetVerifySignatureAlgorithms
        // Verification is ours (ServerTrustEvaluator in the custom callback); this only makes
        // BoringSSL ask for it.
        tls.certificateVerification = .fullVerification
        if let identity {
            do {
                tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(identity.certificateChainPEM.utf8))
                    .map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
            } catch {
                throw SignetError(.invalidKey, "the client certificate or key does not load: \(error)")
            }
        }
        return try NIOSSLContext(configuration: tls)
    }

    deinit {
        for connection in connections.values { connection.close() }
    }
}
