// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetCore

/// Who a request is from, as one access mode decides it: request in, identity out. Every gate the
/// gateway puts in front of a route — signatures, tokens, client certificates, passwords, the
/// legacy schemes, Play Integrity — is one, and they all admit a request the same way
/// (``admit(_:context:next:)``): authenticate, put the identity in the context, count it, go on,
/// then whatever the answer needs on its way back. hummingbird-auth's `AuthenticatorMiddleware`
/// has the same shape; ``AuthenticatorMiddleware`` here is the gate for an authenticator of an
/// app's own.
public protocol RequestAuthenticator<Context>: Sendable {
    associatedtype Context: SignetRequestContextProtocol
    /// Where acceptances are counted (`signet_requests_total{outcome="accepted"}`…).
    var metrics: SignetMetrics? { get }
    /// The identity of `request`, or a refusal (`SignetError`). May rewrite the request (a
    /// decrypted body, a rebuilt query, credentials removed) and note what it verified in
    /// `context.signet`.
    func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission
}

/// What an authenticator decided: the identity, and what the answer needs on its way back.
public struct Admission: Sendable {
    public var identity: SignetIdentity
    /// Fields set on the answer, each replacing any of its name (a fresh `DPoP-Nonce`, the next
    /// challenge): known when the request is admitted, so the answer's head carries them as it
    /// leaves, on either of the gateway's paths.
    public var answerFields: HTTPFields
    /// Applied to the whole answer before it leaves, where its fields depend on the answer itself
    /// (Digest's `Authentication-Info` over the body, `qop=auth-int`); `nil` for none. The
    /// gateway's event-loop data plane holds such an answer whole for it.
    public var answering: (@Sendable (inout Response) async throws -> Void)?

    public init(
        _ identity: SignetIdentity,
        answerFields: HTTPFields = [:],
        answering: (@Sendable (inout Response) async throws -> Void)? = nil
    ) {
        self.identity = identity
        self.answerFields = answerFields
        self.answering = answering
    }
}

extension RequestAuthenticator {
    /// The one shape of every gate.
    public func admit(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var request = request
        var context = context
        let admission = try await authenticate(&request, context: &context)
        context.signet.identity = admission.identity
        metrics?.recordAccepted(admission.identity)
        var response = try await next(request, context)
        admission.setAnswerFields(on: &response.headers)
        try await admission.answering?(&response)
        return response
    }
}

extension Admission {
    /// Sets ``answerFields`` on an answer's `fields`, each replacing any of its name.
    public func setAnswerFields(on fields: inout HTTPFields) {
        for name in Set(answerFields.map(\.name)) { fields[name] = nil }
        fields.append(contentsOf: answerFields)
    }
}

extension RequestAuthenticator where Self: RouterMiddleware {
    /// A middleware that is its own authenticator admits as every gate does.
    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await admit(request, context: context, next: next)
    }
}

/// The gate for any ``RequestAuthenticator``.
///
/// ```swift
/// router.group("partners").add(middleware: AuthenticatorMiddleware(PartnerKeyAuthenticator()))
/// ```
public struct AuthenticatorMiddleware<Authenticator: RequestAuthenticator>: RouterMiddleware {
    public typealias Context = Authenticator.Context
    public let authenticator: Authenticator

    public init(_ authenticator: Authenticator) {
        self.authenticator = authenticator
    }

    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await authenticator.admit(request, context: context, next: next)
    }
}
