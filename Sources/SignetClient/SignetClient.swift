// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
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
    /// Made at the first request (it asks this client about every TLS chain), then kept.
    private var transportInUse: (any ClientTransport)?
    private var clientIdentity: ClientIdentity?
    /// The signer used for requests (set by `register(using:)` or ``useSigner(_:)``).
    public internal(set) var signer: (any RequestSigning)? {
        // Tokens and attestations are bound to the old signer's key, those being fetched too
        // (a registration, a restored key, `useSigner`).
        didSet {
            signerGeneration += 1
            appTokens = [:]
            appTokenFetches = [:]
            clientAttestations = [:]
            clientAttestationFetches = [:]
        }
    }
    /// The device registered by `register(using:)`.
    public internal(set) var device: RegisteredDevice?
    /// The provider that registers again when the key is gone (``start(with:origin:)``).
    var persistentProvider: (any PersistentAttestationProvider)?
    /// A registration under way: concurrent callers (two requests finding the key gone) share it.
    var registrationInFlight: Task<RegisteredDevice, any Error>?
    /// Where the device registered: only that gateway's word that the key is gone counts.
    var registrationOrigin: Origin?
    /// Counts registrations, so requests that find the key gone together register again once.
    var registrationGeneration = 0
    /// How far the gateway's clock is ahead of this device's (seconds), learned from the `Date` of
    /// its answers when the two differ by more than 3 s (the rounding of `Date`); signatures are made
    /// at ``gatewayNow``.
    public internal(set) var clockOffset: TimeInterval = 0
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
    var appTokens: [AppTokenSlot: AppToken] = [:]
    var appTokenFetches: [AppTokenSlot: Task<AppToken, any Error>] = [:]
    /// What each gateway asked of signatures in `Accept-Signature` (RFC 9421 §5.1), once it did.
    var signatureRequests: [Origin: SignatureRequest] = [:]
    /// The latest `DPoP-Nonce` each gateway handed out.
    var dpopNonces: [Origin: String] = [:]
    /// Counts changes of ``signer``: a token or attestation fetched for an earlier one is not kept.
    var signerGeneration = 0
    /// Cached client attestations, and fetches under way.
    var clientAttestations: [Origin: ClientAttestation] = [:]
    var clientAttestationFetches: [Origin: Task<ClientAttestation, any Error>] = [:]
    /// The latest `OAuth-Client-Attestation-Challenge` each gateway handed out.
    var attestationChallenges: [Origin: String] = [:]

    /// - Parameters:
    ///   - configuration: Origins, trust, timeouts and the transport.
    ///   - clock: The time signatures, pins and tokens are judged at.
    public init(
        configuration: SignetClientConfiguration,
        clock: @escaping @Sendable () -> Date = Date.init
    ) throws {
        guard !configuration.origins.isEmpty else {
            throw SignetError(.originNotAllowed, "configure at least one origin")
        }
        self.configuration = configuration
        self.clock = clock
        self.clientIdentity = configuration.clientIdentity
        self.obliviousKeys = configuration.obliviousKeys
        self.trust = configuration.trust
        self.responseKeys = configuration.responseKeys
        self.liveTrust = LiveTrust(pinSets: configuration.trust.pinSets, responseKeys: configuration.responseKeys)
        // A transport that cannot do what is configured (pins over Linux's URLSession) is refused
        // now, not at the first request.
        switch configuration.transport.kind {
        case .urlSession:
            try URLSessionTransport.checkSupported(origins: configuration.origins, identity: configuration.clientIdentity)
        #if os(macOS) || !canImport(Darwin)
        case .nio:
            _ = try NIOTransport.makeTLSContext(identity: configuration.clientIdentity)
        #endif
        }
    }

    /// Uses `signer` for every later request.
    public func useSigner(_ signer: any RequestSigning) {
        self.signer = signer
    }

    /// Presents this client certificate on new connections (mutual TLS); open connections close.
    public func useClientIdentity(_ identity: ClientIdentity?) async throws {
        try await transportInUse?.useClientIdentity(identity)
        clientIdentity = identity
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
        if sign, let target = message.target, usesClientAttestation(target) {
            return try await sendWithClientAttestation(method, url, to: try allowedOrigin(target), fields: fields, body: body)
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

    /// Signs (when asked and a signer is set) and sends `message` with a password `authorization`;
    /// each try signed anew at ``gatewayNow``. Sent again: after a failure or answer
    /// ``SignetClientConfiguration/retry`` says is worth it; once, at once, when the answer taught
    /// the client a new clock offset and refused the signature's time; once, after registering
    /// again, when the key is gone (``start(with:origin:)``).
    private func transmit(
        _ message: HTTPMessage,
        authorization: (String, DigestCredentials?)?,
        sign: Bool
    ) async throws -> (ClientResponse, DigestCredentials?) {
        var message = message
        if let (value, _) = authorization { message.fields.set(name: "Authorization", value: value) }
        let method = message.method ?? "GET"
        let origin = try message.target.map(allowedOrigin)
        var failures = 0
        var clockCorrected = false
        var registeredAgain = false
        var signedAsAsked = false
        while true {
            let offset = clockOffset
            let generation = registrationGeneration
            let signed: HTTPMessage
            do {
                signed = sign && signer != nil ? try await signedForGateway(message, at: origin) : message
            } catch let error as SignetError where error.code == .invalidKey && !registeredAgain {
                // The signer's key is gone (App Attest after a reinstall, an erased enclave). Only
                // the signer's own error: a client certificate that does not load is not this.
                guard let origin, try await registerAgain(after: generation, refusedBy: origin) else { throw error }
                registeredAgain = true
                continue
            }
            let response: ClientResponse
            do {
                response = try await deliver(signed)
            } catch {
                guard let failure = ClientTransportFailure(error) else { throw error }
                failures += 1
                guard let wait = configuration.retry.wait(afterFailure: failure, method: method, failures: failures) else {
                    throw failure.error
                }
                configuration.logger.debug("retrying", metadata: ["after": "\(failure.error.code)", "wait": "\(wait)"])
                try await Task.sleep(for: wait)
                continue
            }
            if sign, signer != nil, !clockCorrected, clockOffset != offset, response.status == 401,
                [SignetError.Code.createdInFuture, .createdTooOld, .expired].contains(where: { $0 == response.gatewayRefusal })
            {
                clockCorrected = true
                continue
            }
            // The gateway said what its signatures must cover (`Accept-Signature`): signed so once
            // more, and from then on for that gateway.
            if sign, signer != nil, !signedAsAsked, response.status == 401, let origin,
                response.gatewayRefusal.map(SignatureRequest.answeredRefusals.contains) == true,
                let asked = response.fields["Accept-Signature"].flatMap({ try? SignatureRequest.parse($0).first }),
                asked != signatureRequests[origin]
            {
                signatureRequests[origin] = asked
                signedAsAsked = true
                continue
            }
            if sign, signer != nil, !registeredAgain, saysKeyIsGone(response), let origin,
                try await registerAgain(after: generation, refusedBy: origin)
            {
                registeredAgain = true
                continue
            }
            failures += 1
            if let wait = configuration.retry.wait(after: response, method: method, failures: failures) {
                configuration.logger.debug("retrying", metadata: ["after": "\(response.status)", "wait": "\(wait)"])
                try await Task.sleep(for: wait)
                continue
            }
            return (response, authorization?.1)
        }
    }

    /// `message` signed as the gateway asked (`Accept-Signature`), or as by default when it asked
    /// for something this signer cannot sign: the request is then forgotten, and the gateway's
    /// next refusal says again what it wants.
    private func signedForGateway(_ message: HTTPMessage, at origin: Origin?) async throws -> HTTPMessage {
        guard let signer else { return message }
        guard let origin, let asked = signatureRequests[origin] else { return try await signer.sign(message, now: gatewayNow) }
        do {
            return try await signer.sign(message, now: gatewayNow, asked: asked)
        } catch {
            signatureRequests[origin] = nil
            return try await signer.sign(message, now: gatewayNow)
        }
    }

    /// The device's clock moved onto the gateway's by the learned ``clockOffset``: the time
    /// signatures are made at.
    public var gatewayNow: Date { clock().addingTimeInterval(clockOffset) }

    /// Sends `message` exactly as given (already signed, or deliberately unsigned). The origin
    /// check still applies.
    public func transmit(_ message: HTTPMessage) async throws -> ClientResponse {
        do {
            return try await deliver(message)
        } catch let failure as ClientTransportFailure {
            throw failure.error
        }
    }

    /// One exchange: the origin check, the transport, the clock learned from the answer, its
    /// signature checked, pin reports delivered. Transport failures stay classified for retries.
    private func deliver(_ message: HTTPMessage) async throws -> ClientResponse {
        guard let target = message.target, let method = message.method else {
            throw SignetError(.malformedMessage, "not a request")
        }
        let origin = try allowedOrigin(target)
        let request = TransportRequest(
            origin: origin,
            method: method,
            path: Self.originForm(target),
            fields: message.fields.lines.map { ($0.name, $0.value) },
            body: message.body
        )
        let sent = clock()
        var response = try await exchangeClassified(request)
        if let date = response.fields["date"], let offset = ClockOffset.estimate(date: date, sent: sent, received: clock()),
            offset != clockOffset
        {
            configuration.logger.debug("clock offset", metadata: ["seconds": "\(offset)", "origin": "\(origin)"])
            clockOffset = offset
        }
        response.signature = try await verifyResponseSignature(response, request: message)
        await deliverPinReports()
        return response
    }

    /// Sends one request over the transport, logging what it does (never a field value).
    func exchange(_ request: TransportRequest) async throws -> ClientResponse {
        do {
            return try await exchangeClassified(request)
        } catch let failure as ClientTransportFailure {
            throw failure.error
        }
    }

    private func exchangeClassified(_ request: TransportRequest) async throws -> ClientResponse {
        // The path without its query: a query may carry a token or a legacy MAC.
        let path = request.path.prefix { $0 != "?" }
        let log: Logger.Metadata = ["method": "\(request.method)", "origin": "\(request.origin)", "path": "\(path)"]
        configuration.logger.debug("request", metadata: log)
        let response = try await transport().execute(request, timeout: configuration.timeout)
        configuration.logger.debug("answer", metadata: ["status": "\(response.status)", "origin": "\(request.origin)"])
        return response
    }

    /// Closes every kept-alive connection (an app going to the background; a test stopping its
    /// server); the next request opens a new one, checked against the trust in force then.
    public func closeConnections() async {
        await transportInUse?.closeConnections()
    }

    private func transport() throws -> any ClientTransport {
        if let transportInUse { return transportInUse }
        let made = try makeTransport()
        transportInUse = made
        return made
    }

    /// The configured transport, asking this client about every TLS chain: the ``trust`` in force
    /// (chain, then pins), with the pin evaluation recorded for reports.
    private func makeTransport() throws -> any ClientTransport {
        let now = clock
        let check: ServedChainCheck = { [weak self] served, origin in
            guard let self else { return SignetError(.connectionFailed, "the client is gone") }
            let result = await self.trust.evaluate(served, origin: origin, now: now())
            if let evaluation = result.pins { await self.record(evaluation, for: origin) }
            return result.error
        }
        switch configuration.transport.kind {
        #if os(macOS) || !canImport(Darwin)
        case .nio(let loops):
            return try NIOTransport(
                group: loops.group,
                identity: clientIdentity,
                maximumResponseBytes: configuration.maximumResponseBytes,
                logger: configuration.logger,
                check: check
            )
        #endif
        case .urlSession(let sessionConfiguration):
            let atsRefused = AppTransportSecurity(infoDictionary: Bundle.main.infoDictionary)
                .refusedPrivateRoots(origins: configuration.origins, roots: configuration.trust.roots)
            for origin in atsRefused {
                configuration.logger.warning("\(AppTransportSecurity.exceptionNeeded(for: origin.host))")
            }
            return try URLSessionTransport(
                configuration: sessionConfiguration,
                origins: configuration.origins,
                identity: clientIdentity,
                maximumResponseBytes: configuration.maximumResponseBytes,
                atsRefused: Set(atsRefused),
                check: check
            )
        }
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
        return try await ResponseSignatureVerifier(keys: keys).verify(message, for: request, now: gatewayNow)
    }

}
