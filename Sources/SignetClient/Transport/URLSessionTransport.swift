// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``SignetClient`` over the system's `URLSession`. The session never follows a redirect (the
/// client does, within its origins), answers only challenges from configured origins, and hands
/// every server chain to the client's ``ServedChainCheck`` — the same decision as over SwiftNIO.
///
/// The Apple-only parts (the chain out of `SecTrust`, a `SecIdentity` for mutual TLS) are the shim
/// in `URLSessionTransport+Security.swift`; everything else here builds and is tested on Linux.
final class URLSessionTransport: ClientTransport {
    private struct Session {
        var session: URLSession
        var delegate: URLSessionTransportDelegate
    }

    private let makeConfiguration: @Sendable () -> URLSessionConfiguration
    private let origins: [Origin]
    private let maximumResponseBytes: Int
    private let check: ServedChainCheck
    private let current: Locked<Session>
    /// Origins whose private roots App Transport Security will refuse (no exception in Info.plist).
    private let atsRefused: Set<Origin>

    init(
        configuration: @escaping @Sendable () -> URLSessionConfiguration,
        origins: [Origin],
        identity: ClientIdentity?,
        maximumResponseBytes: Int,
        atsRefused: Set<Origin> = [],
        check: @escaping ServedChainCheck
    ) throws {
        try Self.checkSupported(origins: origins, identity: identity)
        self.makeConfiguration = configuration
        self.origins = origins
        self.atsRefused = atsRefused
        self.maximumResponseBytes = maximumResponseBytes
        self.check = check
        self.current = Locked(
            try Self.makeSession(configuration(), origins: origins, identity: identity, check: check)
        )
    }

    /// A background session (a configuration with an identifier) hands its tasks to the system,
    /// which sends them later — after the signatures' window — and takes no completion handlers:
    /// refused (`transport_unsupported`), not crashed on.
    static func refuseBackground(identifier: String?) throws {
        if let identifier {
            throw SignetError(
                .transportUnsupported,
                "a background URLSessionConfiguration (\(identifier)) cannot carry the client's signed requests; use .ephemeral or .default"
            )
        }
    }

    /// Refuses what this platform's `URLSession` cannot do as configured.
    static func checkSupported(origins: [Origin], identity: ClientIdentity?) throws {
        #if !(canImport(Security) && canImport(Darwin))
        // FoundationNetworking (libcurl) decides server trust itself, from the system's CA files,
        // without asking the delegate: pins and the configured roots would silently not apply.
        if let tls = origins.first(where: \.isTLS) {
            throw SignetError(
                .certificateUntrusted,
                "URLSession on this platform cannot apply the client's trust to \(tls); use SignetTransport.nio() here"
            )
        }
        if identity != nil { _ = try URLSessionTransportDelegate.credential(for: identity!) }
        #endif
    }

    private static func makeSession(
        _ configuration: URLSessionConfiguration,
        origins: [Origin],
        identity: ClientIdentity?,
        check: @escaping ServedChainCheck
    ) throws -> Session {
        try refuseBackground(identifier: configuration.identifier)
        let delegate = URLSessionTransportDelegate(
            origins: origins,
            clientCredential: try identity.map(URLSessionTransportDelegate.credential(for:)),
            check: check
        )
        return makeSession(configuration, origins: origins, delegate: delegate)
    }

    private static func makeSession(
        _ configuration: URLSessionConfiguration,
        origins: [Origin],
        delegate: URLSessionTransportDelegate
    ) -> Session {
        // Every answer comes from the gateway, now: no cache to answer a GET from, no cookies or
        // stored credentials the client did not sign.
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        configuration.urlCredentialStorage = nil
        return Session(session: URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil), delegate: delegate)
    }

    func execute(_ request: TransportRequest, timeout: Duration) async throws -> ClientResponse {
        let urlRequest = try Self.urlRequest(for: request, timeout: timeout)
        let handle = TaskHandle()
        let limit = maximumResponseBytes
        do {
            return try await withTimeout(timeout) { [current] in
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ClientResponse, any Error>) in
                        // Made under the lock: a session replaced meanwhile (a new identity) is
                        // never asked for a task after it was invalidated.
                        let task = current.withLock { current in
                            current.session.dataTask(with: urlRequest) { data, response, error in
                                continuation.resume(with: Self.response(data: data, response: response, error: error, limit: limit))
                            }
                        }
                        handle.start(task)
                    }
                } onCancel: {
                    handle.cancel()
                }
            }
        } catch let error as SignetError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            let delegate = current.withLock { $0.delegate }
            if let id = handle.identifier, let refusal = delegate.takeRefusal(for: id) { throw refusal }
            if Task.isCancelled { throw CancellationError() }
            if let urlError = error as? URLError, urlError.code == .timedOut {
                throw SignetError(.requestTimeout, "no answer from \(request.origin) within \(timeout)")
            }
            if let urlError = error as? URLError, let refusal = Self.atsRefusal(urlError, origin: request.origin, atsRefused: atsRefused) {
                throw refusal
            }
            let failure = SignetError(.connectionFailed, "cannot reach \(request.origin): \(error.localizedDescription)")
            if let urlError = error as? URLError, Self.nothingSent.contains(urlError.code) { throw ClientTransportFailure.unsent(failure) }
            throw failure
        }
    }

    /// A handshake that failed after the client accepted the chain, because App Transport Security
    /// refused the private root (the origin has no exception, or the system said so): named, with
    /// the Info.plist key that fixes it, rather than `connection_failed`.
    static func atsRefusal(_ error: URLError, origin: Origin, atsRefused: Set<Origin>) -> SignetError? {
        let tls: Set<URLError.Code> = [
            .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasUnknownRoot,
            .serverCertificateHasBadDate, .serverCertificateNotYetValid,
        ]
        let streamError = error.userInfo["_kCFStreamErrorCodeKey"] as? Int
        guard tls.contains(error.code), atsRefused.contains(origin) || streamError == SystemTrustFailure.atsCertificateTrustViolation
        else { return nil }
        return SignetError(.certificateUntrusted, AppTransportSecurity.exceptionNeeded(for: origin.host))
    }

    /// Failures before a connection existed: the request was not sent (a retry is safe for any method).
    /// Only the codes that mean no connection existed: the network dropping mid-request can be
    /// reported as `notConnectedToInternet` too, so that one is not taken for "nothing sent".
    static let nothingSent: Set<URLError.Code> = [.cannotFindHost, .cannotConnectToHost, .dnsLookupFailed]

    /// The request as `URLSession` takes it, sent exactly where the client signed it for: a path
    /// that would change the host (`@evil.example/…`) or be re-encoded is refused, not sent.
    static func urlRequest(for request: TransportRequest, timeout: Duration) throws -> URLRequest {
        let text = request.origin.description + request.path
        guard request.path.hasPrefix("/"), let url = URL(string: text), url.absoluteString == text,
            url.scheme == request.origin.scheme, url.host == request.origin.host,
            (url.port ?? (request.origin.isTLS ? 443 : 80)) == request.origin.port
        else { throw SignetError(.originNotAllowed, "\(request.path.debugDescription) is not a path on \(request.origin); nothing was sent") }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for field in request.fields { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        // URLSession offers gzip and inflates what it gets; a signed answer's digest covers the
        // bytes as the gateway sent them, so ask for those.
        if urlRequest.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        if request.framesBody { urlRequest.httpBody = Data(request.body) }
        urlRequest.timeoutInterval = Double(timeout.components.seconds) + 1
        return urlRequest
    }

    private static func response(data: Data?, response: URLResponse?, error: (any Error)?, limit: Int) -> Result<ClientResponse, any Error> {
        if let error { return .failure(error) }
        guard let http = response as? HTTPURLResponse else {
            return .failure(SignetError(.connectionFailed, "the server did not answer in HTTP"))
        }
        let data = data ?? Data()
        // URLSession has the whole body by now; the bound still keeps what the client holds and
        // parses the same as over SwiftNIO.
        guard data.count <= limit else {
            return .failure(SignetError(.bodyTooLarge, "the response exceeds \(limit) bytes"))
        }
        var fields = MessageFields()
        for (name, value) in http.allHeaderFields {
            fields.append(name: String(describing: name), value: String(describing: value))
        }
        return .success(ClientResponse(status: http.statusCode, fields: fields, body: Array(data)))
    }

    /// A new identity needs a new session: `URLSession` keeps the credential a connection presented.
    func useClientIdentity(_ identity: ClientIdentity?) throws {
        let fresh = try Self.makeSession(makeConfiguration(), origins: origins, identity: identity, check: check)
        replace(with: fresh)
    }

    /// A new session with the same credential: kept-alive connections are not reused, so the
    /// next request's handshake meets the trust in force then.
    func closeConnections() {
        let fresh = current.withLock { current in
            Self.makeSession(makeConfiguration(), origins: origins, delegate: current.delegate.withSameCredential())
        }
        replace(with: fresh)
    }

    private func replace(with fresh: Session) {
        let old = current.withLock { current in
            defer { current = fresh }
            return current.session
        }
        old.finishTasksAndInvalidate()
    }

    deinit {
        current.withLock { $0.session }.finishTasksAndInvalidate()
    }
}

/// The `URLSessionDataTask` of one request, for cancellation and for the refusal its handshake
/// left; cancelled before it exists, it is cancelled as it starts.
private final class TaskHandle: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelled = self.cancelled
        lock.unlock()
        task.resume()
        if cancelled { task.cancel() }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }

    var identifier: Int? {
        lock.lock()
        defer { lock.unlock() }
        return task?.taskIdentifier
    }
}

/// The session's delegate: no redirects followed, challenges answered for configured origins only,
/// server chains decided by the client.
final class URLSessionTransportDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    private let origins: [Origin]
    private let clientCredential: URLCredential?
    private let check: ServedChainCheck
    /// Why a handshake was refused, per task: `URLSession` itself reports only "cancelled".
    private let refusals = Locked<[Int: SignetError]>([:])

    init(origins: [Origin], clientCredential: URLCredential?, check: @escaping ServedChainCheck) {
        self.origins = origins
        self.clientCredential = clientCredential
        self.check = check
    }

    func takeRefusal(for task: Int) -> SignetError? {
        refusals.withLock { $0.removeValue(forKey: task) }
    }

    /// A delegate for a fresh session that presents the same client certificate.
    func withSameCredential() -> URLSessionTransportDelegate {
        URLSessionTransportDelegate(origins: origins, clientCredential: clientCredential, check: check)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // The client follows redirects itself, to configured origins only, re-signing each hop.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let space = challenge.protectionSpace
        guard let origin = try? Origin(scheme: space.protocol ?? "https", host: space.host, port: space.port),
            origins.contains(origin)
        else { return completionHandler(.cancelAuthenticationChallenge, nil) }
        #if canImport(Security) && canImport(Darwin)
        switch space.authenticationMethod {
        case NSURLAuthenticationMethodServerTrust:
            guard let (chain, credential) = Self.servedChain(space) else {
                refusals.withLock { $0[task.taskIdentifier] = SignetError(.certificateUntrusted, "the server showed no certificate chain") }
                return completionHandler(.cancelAuthenticationChallenge, nil)
            }
            decide(chain, from: origin, for: task.taskIdentifier, accepting: credential, completionHandler)
            return
        case NSURLAuthenticationMethodClientCertificate:
            return completionHandler(clientCredential == nil ? .performDefaultHandling : .useCredential, clientCredential)
        default:
            // HTTP Basic, Digest, NTLM, Negotiate: never stored or single-sign-on credentials
            // re-sending the signed request; the 401 comes back to the client, which answers it.
            return completionHandler(.rejectProtectionSpace, nil)
        }
        #else
        // FoundationNetworking asks only about HTTP authentication, and answers the 401 itself
        // with nothing stored (the session keeps no credentials).
        completionHandler(.performDefaultHandling, nil)
        #endif
    }

    /// The client's decision on a served chain, and why it refused, for the error the request gets.
    func decide(
        _ chain: ServedChain,
        from origin: Origin,
        for task: Int,
        accepting credential: URLCredential,
        _ completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (check, refusals) = (self.check, self.refusals)
        Task {
            if let refusal = await check(chain, origin) {
                refusals.withLock { $0[task] = refusal }
                completionHandler(.cancelAuthenticationChallenge, nil)
            } else {
                completionHandler(.useCredential, credential)
            }
        }
    }
}
