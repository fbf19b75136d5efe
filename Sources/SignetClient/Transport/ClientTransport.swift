// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

#if canImport(Security) && canImport(Darwin)
import Security
#endif

/// One exchange as a transport carries it: the origin, the method, the origin-form target, the
/// fields (never `Host`, `Content-Length` or `Connection`: the transport writes those) and the body.
struct TransportRequest: Sendable {
    var origin: Origin
    var method: String
    var path: String
    var fields: [(name: String, value: String)] = []
    var body: [UInt8] = []

    init(origin: Origin, method: String, path: String, fields: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.origin = origin
        self.method = method
        self.path = path
        self.fields = fields.filter { !["host", "content-length", "connection"].contains($0.name.lowercased()) }
        self.body = body
    }

    /// A body is framed for methods that carry one, even when it is empty (`Content-Length: 0`).
    var framesBody: Bool { !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) }
}

/// A chain a server presented in a handshake: its certificates (DER, leaf first) and, on Apple
/// platforms, the handshake's own `SecTrust`.
struct ServedChain: @unchecked Sendable {  // SecTrust is not Sendable; one evaluation uses it, while the handshake waits
    var der: [[UInt8]]
    #if canImport(Security) && canImport(Darwin)
    /// Evaluated in place, so the stapled OCSP response and the SCTs the server sent in TLS count
    /// (a trust rebuilt from DER has neither, and fails Certificate Transparency for servers that
    /// deliver SCTs only that way).
    var trust: SecTrust?
    #endif

    init(der: [[UInt8]]) {
        self.der = der
    }
}

extension ServerTrustEvaluator {
    /// Evaluates a served chain: on the handshake's own `SecTrust` where there is one (Apple
    /// platforms), else from its certificates.
    func evaluate(_ served: ServedChain, origin: Origin, now: Date) async -> ServerTrustResult {
        #if canImport(Security) && canImport(Darwin)
        if let trust = served.trust {
            return evaluate(serverTrust: trust, servedChain: served.der, host: origin.host, port: origin.port, now: now)
        }
        #endif
        return await evaluate(servedChain: served.der, host: origin.host, port: origin.port, now: now)
    }
}

/// Decides whether a served chain may be talked to for `origin`: the reason to refuse, or `nil`.
/// The client's ``ServerTrustEvaluator`` in force, whichever transport asks.
typealias ServedChainCheck = @Sendable (_ chain: ServedChain, _ origin: Origin) async -> SignetError?

/// What carries a ``SignetClient``'s requests: its own SwiftNIO connections (``NIOTransport``) or
/// the system's `URLSession` (``URLSessionTransport``). Both leave redirects, signing and response
/// checks to the client, and both ask the same ``ServedChainCheck`` about every TLS chain.
protocol ClientTransport: Sendable {
    /// Sends `request` and returns the whole answer, or fails with `request_timeout` after `timeout`.
    func execute(_ request: TransportRequest, timeout: Duration) async throws -> ClientResponse
    /// Presents `identity` on new connections (mutual TLS); open connections close.
    func useClientIdentity(_ identity: ClientIdentity?) async throws
    /// Closes kept-alive connections; the next request opens a new one.
    func closeConnections() async
}

/// A transport failure, with what it says about the request: whether it may have reached the
/// server (the client retries a request that may have been executed only when its method is
/// idempotent, ``RequestRetry``). The client throws ``error`` to the app.
struct ClientTransportFailure: Error {
    var error: SignetError
    var mayHaveBeenSent: Bool

    /// No connection could be made: nothing was sent.
    static func unsent(_ error: SignetError) -> Self { Self(error: error, mayHaveBeenSent: false) }

    /// What a thrown error says: a connection or timeout failure may have been sent; anything
    /// else (a refused chain, a pin, a body too large) is not a failure to retry.
    init?(_ error: any Error) {
        if let failure = error as? ClientTransportFailure {
            self = failure
        } else if let error = error as? SignetError, [.connectionFailed, .requestTimeout].contains(error.code) {
            self.init(error: error, mayHaveBeenSent: true)
        } else {
            return nil
        }
    }

    private init(error: SignetError, mayHaveBeenSent: Bool) {
        self.error = error
        self.mayHaveBeenSent = mayHaveBeenSent
    }
}
