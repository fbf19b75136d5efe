// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetCore
import SignetMiddleware

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
