// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetCore
import SignetMiddleware

/// A route's gate as the authorization listener runs it, for another proxy: the same gate as on
/// Signet's own proxy (so the same verdicts, nonces claimed, counters advanced), after two
/// refusals only another proxy's question can call for:
/// - `authorization_unsupported`: the mode's gate needs what only Signet's own listener has, or
///   changes the request it admits (``AccessMode/notExternallyAuthorizable``);
/// - `body_not_forwarded`: the gate checks bodies and the body the request announced did not come
///   whole (``AuthorizationQuestion``). A digest is never taken on trust.
struct ExternalAuthorizationGate: RouterMiddleware {
    typealias Context = SignetRequestContext
    let gate: RouteGate
    let mode: AccessMode?
    let access: GatewayConfiguration.Route.Access

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let mode, let why = mode.notExternallyAuthorizable ?? mode.notExternallyAuthorizableWith(access) {
            throw SignetError(.authorizationUnsupported, "\(mode.name) routes can be enforced only by Signet's own proxy: \(why)")
        }
        if context.signet.bodyWithheld, mode?.checksBody == true {
            throw SignetError(.bodyNotForwarded, "the request carries a body the authorization request did not bring whole; this route checks bodies")
        }
        return try await gate.handle(request, context: context, next: next)
    }
}
