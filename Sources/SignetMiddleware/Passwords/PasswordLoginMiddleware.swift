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
public struct PasswordLoginMiddleware<Context: SignetRequestContextProtocol>: RouterMiddleware, RequestAuthenticator {
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

    /// A signed request on a `password-or-device` route: the device branch, the verification
    /// middleware with this route's requirement (checked before any cryptography or nonce claim).
    /// Otherwise the password branch: the login, the credentials removed before the upstream, and
    /// Digest's `Authentication-Info` on the answer. One authenticator either way, so every path
    /// that runs the gate (Hummingbird's, the gateway's event-loop data plane) runs both branches.
    public func authenticate(_ request: inout Request, context: inout Context) async throws -> Admission {
        if let signatures, request.headers[.signatureInput] != nil || request.headers[.signature] != nil {
            // Password material a signed request carries goes no further — so a signature may not
            // vouch for it: the upstream would never get it.
            if !route.keepAuthorization, Self.carriesPassword(request), Self.coversAuthorization(request) {
                throw SignetError(.malformedHeader, "the signature covers Authorization, whose password credentials never reach the upstream")
            }
            let devices = SignetVerificationMiddleware<Context>(
                verifier: signatures,
                requirement: .passwordOrDevice(route),
                metrics: metrics,
                clock: clock
            )
            let admission = try await devices.authenticate(&request, context: &context)
            request = Self.removingAuthorization(request, keep: route.keepAuthorization, passwordSchemesOnly: true)
            return admission
        }
        let login: PasswordLogin
        do {
            login = try await authenticator.authenticate(&request, context: context, route: route, maximumBodyBytes: maximumBodyBytes, clock: clock)
        } catch var refusal as ChallengedRefusal where signatures != nil && refusal.error.code == .credentialsMissing {
            // Either way in: a device may sign instead.
            refusal.challenges.append("Signature")
            throw refusal
        }
        request = Self.removingAuthorization(request, keep: route.keepAuthorization)
        guard login.needsResponseBody else {
            // Digest's `Authentication-Info` without the answer's body: known now.
            var fields = HTTPFields()
            if login.scheme == .digest, let info = login.authenticationInfo() { fields[.authenticationInfo] = info }
            return Admission(login.identity, answerFields: fields)
        }
        let limit = maximumBodyBytes
        let method = request.method
        return Admission(login.identity) { response in
            response = try await Self.authenticate(&response, login: login, maximumBodyBytes: limit, method: method)
        }
    }

    /// Whether `Authorization` holds Digest or Basic credentials (what a signed request loses).
    static func carriesPassword(_ request: Request) -> Bool {
        request.headers[values: .authorization].contains { ["digest", "basic"].contains($0.prefix { $0 != " " }.lowercased()) }
    }

    /// Whether any signature's components name `authorization` (read before verification, so
    /// nothing is claimed or computed for a request that cannot be delivered as signed).
    static func coversAuthorization(_ request: Request) -> Bool {
        guard let input = request.headers[.signatureInput], let members = try? StructuredFieldParser.parseDictionary(input) else { return false }
        return members.entries.contains { entry in
            guard case .innerList(let list) = entry.member else { return false }
            return list.items.contains { $0.bareItem == .string("authorization") }
        }
    }

    /// The request without its `Authorization` field, unless the route keeps it, so the password
    /// reaches no handler or upstream. With `passwordSchemesOnly` (a signed request, whose password
    /// material was not used) only a Digest or Basic field goes; another scheme is the upstream's.
    static func removingAuthorization(_ request: Request, keep: Bool, passwordSchemesOnly: Bool = false) -> Request {
        let values = request.headers[values: .authorization]
        guard !keep, !values.isEmpty else { return request }
        if passwordSchemesOnly, !carriesPassword(request) { return request }
        var head = request.head
        head.headerFields[.authorization] = nil
        return Request(head: head, body: request.body)
    }

    /// Adds `Authentication-Info` to a Digest login's answer. For `auth-int` the proof covers the
    /// body, so only an answer of known length within `maximumBodyBytes` is read to compute it; any
    /// other streams through as it is, without the proof (which RFC 7616 allows).
    /// An answer without content (to `HEAD`, a `204`, a `304`) keeps its framing: its proof covers
    /// the empty body it has.
    static func authenticate(
        _ response: inout Response,
        login: PasswordLogin,
        maximumBodyBytes: Int,
        method: HTTPRequest.Method
    ) async throws -> Response {
        guard login.scheme == .digest else { return response }
        guard login.needsResponseBody else {
            if let info = login.authenticationInfo() { response.headers[.authenticationInfo] = info }
            return response
        }
        guard let length = response.body.contentLength ?? response.headers[.contentLength].flatMap(Int.init),
            length <= maximumBodyBytes
        else { return response }
        let collector = ResponseBodyCollector(limit: length)
        try await response.body.write(collector)
        guard let body = collector.collected else {
            throw SignetError(.upstreamUnavailable, "the answer was longer than its Content-Length")
        }
        var headers = response.headers
        if let info = login.authenticationInfo(responseBody: Array(buffer: body)) { headers[.authenticationInfo] = info }
        let hasContent = method != .head && response.status.code >= 200 && ![204, 304].contains(response.status.code)
        if hasContent { headers[.contentLength] = String(body.readableBytes) }
        return Response(status: response.status, headers: headers, body: hasContent ? .init(byteBuffer: body) : ResponseBody { try await $0.finish(nil) })
    }
}

extension HTTPField.Name {
    static let signatureInput = Self("Signature-Input")!
    static let signature = Self("Signature")!
    static let authenticationInfo = Self("Authentication-Info")!
}
