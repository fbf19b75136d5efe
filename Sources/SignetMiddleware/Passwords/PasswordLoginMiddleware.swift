// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore

/// Requires a user's password (HTTP Digest or Basic) on every request under it — or, with a
/// ``signatures`` verifier (`password-or-device`), a signed request of a registered device instead —
/// and puts the user into the context's ``SignetIdentity``.
///
/// ```swift
/// let login = try PasswordAuthenticator(configuration: .init(realm: "bank", transportIsSecure: true), store: store)
/// router.group("accounts").add(middleware: PasswordLoginMiddleware(authenticator: login))
///     .get("me") { _, context in context.signetIdentity!.user! }
/// ```
///
/// The client's `Authorization` field is removed from the request handed on (unless the route
/// keeps it), so the password reaches no handler or upstream. A Digest answer gets
/// `Authentication-Info` with `rspauth`, the server's proof that it knows the password too.
public struct PasswordLoginMiddleware<Context: SignetRequestContextProtocol>: RouterMiddleware {
    public let authenticator: PasswordAuthenticator
    public let route: PasswordRouteOptions
    /// Verifies signed requests instead of asking for a password when they carry a signature
    /// (`password-or-device`); `nil` asks every request for a password.
    public let signatures: SignetRequestVerifier?
    public let metrics: SignetMetrics?
    /// The largest body read for `qop=auth-int`, and the largest answer covered by its `rspauth`.
    public let maximumBodyBytes: Int
    private let clock: @Sendable () -> Date

    public init(
        authenticator: PasswordAuthenticator,
        route: PasswordRouteOptions = .init(),
        signatures: SignetRequestVerifier? = nil,
        metrics: SignetMetrics? = nil,
        maximumBodyBytes: Int = 1 << 20,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.authenticator = authenticator
        self.route = route
        self.signatures = signatures
        self.metrics = metrics
        self.maximumBodyBytes = maximumBodyBytes
        self.clock = clock
    }

    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var request = request
        var context = context
        let now = clock()
        if let signatures, request.headers[.signatureInput] != nil || request.headers[.signature] != nil {
            let (identity, message) = try await signatures.verify(
                &request,
                receivedTarget: context.signet.receivedTarget,
                requirement: .trustLevel(.deviceKey),
                now: now
            )
            metrics?.record(outcome: "accepted", reason: nil)
            context.signet.identity = identity
            context.signet.verifiedMessage = message
            return try await next(request, context)
        }
        let login: PasswordLogin
        do {
            login = try await authenticator.authenticate(
                authorization: request.headers[values: .authorization],
                method: request.method.rawValue,
                target: context.signet.receivedTarget ?? request.head.path ?? "/",
                source: context.remoteAddress,
                route: route,
                body: { [maximumBodyBytes] in
                    Array(buffer: try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body"))
                },
                now: now
            )
        } catch var error as SignetError where signatures != nil && error.code == .credentialsMissing {
            // Either way in: a device may sign instead.
            error.challenges.append("Signature")
            throw error
        }
        metrics?.record(outcome: "accepted", reason: nil)
        context.signet.identity = login.identity
        if !route.keepAuthorization {
            var head = request.head
            head.headerFields[.authorization] = nil
            request = Request(head: head, body: request.body)
        }
        var response = try await next(request, context)
        return try await Self.authenticate(&response, login: login, maximumBodyBytes: maximumBodyBytes)
    }

    /// Adds `Authentication-Info` to a Digest login's answer; for `auth-int` the body is read first
    /// (bounded: a larger answer goes without it, which RFC 7616 allows).
    static func authenticate(_ response: inout Response, login: PasswordLogin, maximumBodyBytes: Int) async throws -> Response {
        guard login.scheme == .digest else { return response }
        guard login.needsResponseBody else {
            if let info = login.authenticationInfo() { response.headers[.authenticationInfo] = info }
            return response
        }
        let collector = ResponseBodyCollector(limit: maximumBodyBytes)
        try await response.body.write(collector)
        guard let body = collector.collected else {
            // Too large to cover: answer without the proof rather than not at all.
            return Response(status: response.status, headers: response.headers, body: .init(byteBuffer: collector.buffer))
        }
        var headers = response.headers
        if let info = login.authenticationInfo(responseBody: Array(buffer: body)) { headers[.authenticationInfo] = info }
        headers[.contentLength] = String(body.readableBytes)
        return Response(status: response.status, headers: headers, body: .init(byteBuffer: body))
    }
}

extension HTTPField.Name {
    static let signatureInput = Self("Signature-Input")!
    static let signature = Self("Signature")!
    static let authenticationInfo = Self("Authentication-Info")!
}
