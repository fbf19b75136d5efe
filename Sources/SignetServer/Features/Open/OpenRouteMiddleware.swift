// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetMiddleware

/// Lets every request through an `open` route, counting it as such.
struct OpenRouteMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: SignetMetrics?

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        metrics?.record(outcome: "open", reason: nil)
        return try await next(request, context)
    }
}
