// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOConcurrencyHelpers
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
    private let current: NIOLockedValueBox<Session>

    init(
        configuration: @escaping @Sendable () -> URLSessionConfiguration,
        origins: [Origin],
        identity: ClientIdentity?,
        maximumResponseBytes: Int,
        check: @escaping ServedChainCheck
    ) throws {
        try Self.checkSupported(origins: origins, identity: identity)
        self.makeConfiguration = configuration
        self.origins = origins
        self.maximumResponseBytes = maximumResponseBytes
        self.check = check
        self.current = NIOLockedValueBox(
            try Self.makeSession(configuration(), origins: origins, identity: identity, check: check)
        )
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
        let delegate = URLSessionTransportDelegate(
            origins: origins,
            clientCredential: try identity.map(URLSessionTransportDelegate.credential(for:)),
            check: check
        )
        return Session(session: URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil), delegate: delegate)
    }

    func execute(_ request: TransportRequest, timeout: Duration) async throws -> ClientResponse {
        guard let url = URL(string: request.origin.description + request.path) else {
            throw SignetError(.malformedMessage, "not a URL: \(request.origin)\(request.path)")
        }
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
        let (session, delegate) = current.withLockedValue { ($0.session, $0.delegate) }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await withTimeout(timeout) { [urlRequest] in
                try await session.data(for: urlRequest)
            }
        } catch let error as SignetError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            if let refusal = delegate.takeRefusal(for: request.origin) { throw refusal }
            if Task.isCancelled { throw CancellationError() }
            if let urlError = error as? URLError, urlError.code == .timedOut {
                throw SignetError(.requestTimeout, "no answer from \(request.origin) within \(timeout)")
            }
            throw SignetError(.connectionFailed, "cannot reach \(request.origin): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw SignetError(.connectionFailed, "\(request.origin) did not answer in HTTP")
        }
        // URLSession has the whole body by now; the bound still keeps what the client holds and
        // parses the same as over SwiftNIO.
        guard data.count <= maximumResponseBytes else {
            throw SignetError(.bodyTooLarge, "the response exceeds \(maximumResponseBytes) bytes")
        }
        var fields = MessageFields()
        for (name, value) in http.allHeaderFields {
            fields.append(name: String(describing: name), value: String(describing: value))
        }
        return ClientResponse(status: http.statusCode, fields: fields, body: Array(data))
    }

    /// A new identity needs a new session: `URLSession` keeps the credential a connection presented.
    func useClientIdentity(_ identity: ClientIdentity?) throws {
        let fresh = try Self.makeSession(makeConfiguration(), origins: origins, identity: identity, check: check)
        let old = current.withLockedValue { current in
            defer { current = fresh }
            return current.session
        }
        old.finishTasksAndInvalidate()
    }

    /// The system manages `URLSession`'s connections; a trust change applies at the next handshake.
    func closeConnections() {}

    deinit {
        current.withLockedValue { $0.session }.finishTasksAndInvalidate()
    }
}

/// The session's delegate: no redirects followed, challenges answered for configured origins only,
/// server chains decided by the client.
final class URLSessionTransportDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    private let origins: [Origin]
    private let clientCredential: URLCredential?
    private let check: ServedChainCheck
    /// Why a handshake was refused, per origin: `URLSession` itself reports only "cancelled".
    private let refusals = NIOLockedValueBox<[Origin: SignetError]>([:])

    init(origins: [Origin], clientCredential: URLCredential?, check: @escaping ServedChainCheck) {
        self.origins = origins
        self.clientCredential = clientCredential
        self.check = check
    }

    func takeRefusal(for origin: Origin) -> SignetError? {
        refusals.withLockedValue { $0.removeValue(forKey: origin) }
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
                return completionHandler(.cancelAuthenticationChallenge, nil)
            }
            decide(chain, from: origin, accepting: credential, completionHandler)
            return
        case NSURLAuthenticationMethodClientCertificate:
            return completionHandler(clientCredential == nil ? .performDefaultHandling : .useCredential, clientCredential)
        default:
            break
        }
        #endif
        // HTTP Basic and Digest: the 401 comes back to the client, which answers it itself.
        completionHandler(.performDefaultHandling, nil)
    }

    /// The client's decision on a served chain, and why it refused, for the error the request gets.
    func decide(
        _ chain: [[UInt8]],
        from origin: Origin,
        accepting credential: URLCredential,
        _ completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (check, refusals) = (self.check, self.refusals)
        Task {
            if let refusal = await check(chain, origin) {
                refusals.withLockedValue { $0[origin] = refusal }
                completionHandler(.cancelAuthenticationChallenge, nil)
            } else {
                completionHandler(.useCredential, credential)
            }
        }
    }
}
