// SPDX-License-Identifier: Apache-2.0
#if canImport(Security) && canImport(Darwin)
import Foundation
import Security
import SignetCore

/// The same trust decision as ``SignetClient`` for apps that keep `URLSession`: for the configured
/// origins the system evaluates the chain and hostname (`SecTrustEvaluateWithError`), then the pin
/// sets decide; other hosts the session reaches (analytics, a CDN) get the system's default
/// handling, as without the delegate. A redirect to another origin is not followed; a signed
/// request redirected within its origins is signed again for its new target by `signer`, or not
/// followed without one (its signature covers the old target).
///
/// ```swift
/// let delegate = SignetURLSessionDelegate(origins: [try Origin("https://api.example.com")],
///                                         liveTrust: client.liveTrust) { report in queue(report.json) }
/// let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
/// ```
///
/// Given a ``SignetClient``'s ``LiveTrust``, it follows the pin sets of the trust document in force,
/// as the client's own connections do.
///
/// - Note: Compiled only where `Security` exists; Linux uses ``SignetClient``'s NIO transport.
public final class SignetURLSessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // Immutable after init: safe to share across URLSession's delegate queue.
    private let origins: [Origin]
    private let liveTrust: LiveTrust
    private let clientCredential: URLCredential?
    private let report: @Sendable (PinFailureReport) -> Void
    private let signer: (any RequestSigning)?

    /// - Parameters:
    ///   - clientIdentity: For mutual TLS, a `SecIdentity` (from the Keychain) and its chain.
    ///   - signer: Signs a request redirected within the origins again for its new target.
    ///   - report: Receives failure reports, for the app to send to its own server.
    public convenience init(
        origins: [Origin],
        pinSets: [PinSet],
        clientIdentity: (identity: SecIdentity, chain: [SecCertificate])? = nil,
        signer: (any RequestSigning)? = nil,
        report: @escaping @Sendable (PinFailureReport) -> Void = { _ in }
    ) {
        self.init(origins: origins, liveTrust: LiveTrust(pinSets: pinSets), clientIdentity: clientIdentity, signer: signer, report: report)
    }

    /// - Parameters:
    ///   - liveTrust: The pins in force (``SignetClient/liveTrust``), read on every handshake.
    ///   - signer: Signs a request redirected within the origins again for its new target.
    public init(
        origins: [Origin],
        liveTrust: LiveTrust,
        clientIdentity: (identity: SecIdentity, chain: [SecCertificate])? = nil,
        signer: (any RequestSigning)? = nil,
        report: @escaping @Sendable (PinFailureReport) -> Void = { _ in }
    ) {
        self.signer = signer
        self.origins = origins
        self.liveTrust = liveTrust
        self.clientCredential = clientIdentity.map {
            URLCredential(identity: $0.identity, certificates: $0.chain, persistence: .forSession)
        }
        self.report = report
    }

    public func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        let space = challenge.protectionSpace
        // Another host the app's session talks to is the system's to judge, as without this delegate.
        guard let origin = try? Origin(scheme: space.protocol ?? "https", host: space.host, port: space.port),
            origins.contains(origin)
        else { return (.performDefaultHandling, nil) }
        switch space.authenticationMethod {
        case NSURLAuthenticationMethodServerTrust:
            return evaluate(space)
        case NSURLAuthenticationMethodClientCertificate:
            return clientCredential.map { (.useCredential, $0) } ?? (.performDefaultHandling, nil)
        default:
            return (.performDefaultHandling, nil)
        }
    }

    private func evaluate(_ space: URLProtectionSpace) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        guard let trust = space.serverTrust else { return (.cancelAuthenticationChallenge, nil) }
        // Chain and hostname first: a pin never rescues an invalid, expired or wrong-host certificate.
        var failure: CFError?
        guard SecTrustEvaluateWithError(trust, &failure) else { return (.cancelAuthenticationChallenge, nil) }
        guard let pinSet = liveTrust.pinSets.first(where: { $0.pattern.matches(space.host) }) else {
            return (.useCredential, URLCredential(trust: trust))
        }
        let chain = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
        let evaluation = pinSet.evaluate(
            chain: chain.map { Array(SecCertificateCopyData($0) as Data) },
            host: space.host,
            port: space.port,
            now: Date()
        )
        if let failureReport = evaluation.report { report(failureReport) }
        switch evaluation.decision {
        case .deny: return (.cancelAuthenticationChallenge, nil)
        case .allow, .allowReported: return (.useCredential, URLCredential(trust: trust))
        }
    }

    public func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest
    ) async -> URLRequest? {
        await SignedRedirect.next(request, origins: origins, signer: signer, now: Date())
    }
}
#endif
