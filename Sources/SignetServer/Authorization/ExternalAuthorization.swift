// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetCore
import SignetMiddleware

/// The authorization listener's answers to another proxy: `200` with the identity fields to copy
/// upstream when the route's gate lets the request through, or the refusal the proxy would
/// have sent, with its reason code also in `Signet-Reason` (nginx's `auth_request` passes a 401 or
/// 403 on but not its body; `auth_request_set` can read the field).
enum ExternalAuthorization {
    /// What the proxy copies upstream: the identity fields, and on a `monitor` route the verdict —
    /// every one of ``identityNames``, empty where it does not apply. A proxy that copies fields by
    /// name then overwrites a client's own spelling of each (Caddy before 2.10 writes its
    /// placeholder's text for a field the answer lacks); nginx sends no empty field.
    static func allowed(context: SignetRequestContext) -> Response {
        var fields = HTTPFields()
        ForwardedFields.appendIdentity(context.signet.identity, verdict: context.signet.verdict, to: &fields)
        for name in identityNames where fields[name] == nil { fields[name] = "" }
        return Response(status: .ok, headers: fields)
    }

    /// The fields an allowed answer carries for the upstream.
    static let identityNames: [HTTPField.Name] = [
        .signetKeyID, .signetTrustLevel, .signetDevice, .signetUser, .signetRiskMetric, .signetAppID, .signetVerdict,
    ]
}

extension HTTPField.Name {
    static let signetReason = Self("Signet-Reason")!
}

/// Adds `Signet-Reason` to a refusal: the reason code the access record holds.
struct RefusalReasonField<Inner: HTTPResponder>: HTTPResponder where Inner.Context == SignetRequestContext {
    typealias Context = SignetRequestContext
    let inner: Inner

    func respond(to request: Request, context: Context) async throws -> Response {
        var response = try await inner.respond(to: request, context: context)
        if response.status.code >= 400, let reason = context.signet.accessRecord?.snapshot.reason {
            response.headers[.signetReason] = reason
        }
        return response
    }
}

/// The authorization listener's entry: reads which request the proxy asks about
/// (``AuthorizationQuestion``) and hands that request — its method, target, fields, the client's
/// address and the body that came — to `inner` (the access log, then the wait for a complete
/// request and the routes' judging stage, as on the apps' listener).
struct AuthorizationEntryResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == SignetRequestContext {
    typealias Context = SignetRequestContext
    let inner: Inner
    /// Proxies before the asking one whose `X-Forwarded-For` hops are skipped.
    let trusted: TrustedProxies?
    /// Whether the store answers: `/readyz` for the proxies' health checks.
    let storeAnswers: @Sendable () async -> Bool
    let debug: Bool
    let metrics: SignetMetrics

    func respond(to request: Request, context: Context) async throws -> Response {
        // For the proxies' health checks (an Envoy cluster's, a balancer's): up, and the store
        // answers. Not the upstream: behind another proxy, reaching it is that proxy's business.
        switch (request.method, request.uri.path.lowercased()) {
        case (.get, "/healthz"), (.head, "/healthz"):
            return try JSONResponse.make(["status": "ok"], status: .ok)
        case (.get, "/readyz"), (.head, "/readyz"):
            let ready = await storeAnswers()
            return try JSONResponse.make(
                ["status": ready ? "ready" : "unavailable", "store": ready ? "ok" : "unavailable"],
                status: ready ? .ok : .serviceUnavailable)
        default:
            break
        }
        let bodyCame = request.headers[.contentLength].map { $0 != "0" } ?? request.headers.contains(.transferEncoding)
        let question: AuthorizationQuestion
        do {
            question = try AuthorizationQuestion(asking: request.head, bodyCame: bodyCame, trusted: trusted)
        } catch let error as SignetError {
            metrics.recordRefusal(error.code, method: request.method.rawValue, path: request.uri.path, keyID: nil, source: context.remoteAddress)
            var response = ProblemResponse.make(error, debug: debug)
            response.headers[.signetReason] = error.code.rawValue
            return response
        }
        var context = context
        context.signet.clientAddress = question.client ?? context.remoteAddress
        context.signet.bodyWithheld = question.bodyWithheld
        return try await inner.respond(to: Request(head: question.head, body: request.body), context: context)
    }
}
