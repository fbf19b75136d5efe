// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetCore
import SignetMiddleware

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
            return ExternalAuthorization.unreadable(error, method: request.method.rawValue, source: context.remoteAddress, debug: debug, metrics: metrics)
        }
        var context = context
        context.signet.clientAddress = question.client ?? context.remoteAddress
        context.signet.bodyWithheld = question.bodyWithheld
        return try await inner.respond(to: Request(head: question.head, body: request.body), context: context)
    }
}
