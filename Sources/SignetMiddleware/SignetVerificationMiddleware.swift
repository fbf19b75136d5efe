// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import Logging
import SignetCore

/// Verifies every request under it, checks the route's ``AccessRequirement`` as soon as the key is
/// known, and puts the client's ``SignetIdentity`` into the context.
///
/// The gateway puts it on each verified route; any Hummingbird app whose context adopts
/// ``SignetRequestContextProtocol`` uses it the same way:
///
/// ```swift
/// let router = Router(context: SignetRequestContext.self)
/// router.add(middleware: ProblemMiddleware())
/// router.group("api").add(middleware: SignetVerificationMiddleware(verifier: requestVerifier))
///     .post("scores") { request, context in "hello \(context.signetIdentity!.keyID)" }
/// ```
///
/// Failures are thrown as `SignetError`; ``ProblemMiddleware`` (or Hummingbird itself) renders
/// them as RFC 9457 problem+json with the reason code.
public struct SignetVerificationMiddleware<Context: SignetRequestContextProtocol>: RouterMiddleware, RequestAuthenticator {
    public let verifier: SignetRequestVerifier
    public let requirement: AccessRequirement
    /// The route's app-build policy for App Attest assertions, in place of the verifier's own
    /// (``SignetRequestVerifier/appBuild``).
    public let appBuild: AppBuildPolicy?
    /// The keys the route takes in the request's `Signature-Key`; none when `nil`.
    public let signatureKeys: SignatureKeyAcceptance?
    public let metrics: SignetMetrics?
    private let clock: @Sendable () -> Date

    public init(
        verifier: SignetRequestVerifier,
        requirement: AccessRequirement = .verified,
        appBuild: AppBuildPolicy? = nil,
        signatureKeys: SignatureKeyAcceptance? = nil,
        metrics: SignetMetrics? = nil,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.verifier = verifier
        self.requirement = requirement
        self.appBuild = appBuild
        self.signatureKeys = signatureKeys
        self.metrics = metrics
        self.clock = clock
    }

    public func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission {
        let (identity, message) = try await judge(&request, receivedTarget: context.signet.receivedTarget, screened: context.signet.isComplete)
        context.signet.verifiedMessage = message
        return Admission(identity)
    }

    /// Verifies `request` as this route asks, counting the time a verify took; a refusal comes as
    /// the client should see it (``SignetRequestVerifier/refusal(_:for:requirement:signatureKeys:)``). What
    /// ``authenticate(_:context:)`` does, for a server that holds no Hummingbird context (the
    /// gateway's event-loop data plane).
    ///
    /// - Parameters:
    ///   - request: The request; its body is read (bounded) and left in it.
    ///   - receivedTarget: The target as the client sent it, when routing normalised it.
    ///   - screened: The head was screened and the body read already.
    public func judge(_ request: inout Request, receivedTarget: String?, screened: Bool) async throws -> (SignetIdentity, ServerMessage) {
        try await timed(refusing: { request }) {
            try await verifier.verifyWhenComplete(
                &request,
                receivedTarget: receivedTarget,
                requirement: requirement,
                appBuild: appBuild,
                signatureKeys: signatureKeys,
                screened: screened,
                clock: clock
            )
        }
    }

    /// ``judge(_:receivedTarget:screened:)`` for a request whose head was screened and whose body
    /// was read already, as the gateway's event-loop data plane holds it.
    ///
    /// - Parameters:
    ///   - head: The head as received.
    ///   - body: The whole body, read within the data plane's bound.
    ///   - receivedTarget: The target as the client sent it, where routing normalised it: the
    ///     path the signature is checked against.
    nonisolated(nonsending) package func judgeComplete(head: HTTPRequest, body: ByteBuffer, receivedTarget: String?) async throws -> (SignetIdentity, ServerMessage) {
        try await timed(refusing: { Request(head: head, body: RequestBody(buffer: body)) }) {
            try await verifier.verifyComplete(
                head: head,
                body: body,
                receivedTarget: receivedTarget,
                requirement: requirement,
                appBuild: appBuild,
                signatureKeys: signatureKeys,
                clock: clock
            )
        }
    }

    /// `verify` timed when it succeeds; its `SignetError` turned into the refusal the client sees,
    /// for `request` as it stands then.
    nonisolated(nonsending) private func timed(
        refusing request: () -> Request,
        _ verify: nonisolated(nonsending) () async throws -> (SignetIdentity, ServerMessage)
    ) async throws -> (SignetIdentity, ServerMessage) {
        let started = ContinuousClock.now
        // Judged when the body is complete, never by the time its head arrived: a request held open
        // must not carry an old moment past the window and claim its nonce late.
        let judged: (SignetIdentity, ServerMessage)
        do {
            judged = try await verify()
        } catch let error as SignetError {
            throw verifier.refusal(error, for: request(), requirement: requirement, signatureKeys: signatureKeys)
        }
        metrics?.recordVerification(ContinuousClock.now - started)
        return judged
    }
}
