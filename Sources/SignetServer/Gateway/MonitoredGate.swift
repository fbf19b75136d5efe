// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetCore
import SignetMiddleware

/// A `monitor` route's gate: the route's own gate judges every request exactly as on an `enforce`
/// route — nonces, counters and token uses claimed, so a replay is still a replay — and the
/// request is forwarded whatever the verdict, with `Signet-Verdict` for the upstream: `accepted`
/// (and the identity fields, as enforcing would send them), or the reason code of the refusal
/// enforcing would have made (and no identity). The access log's `verdict`, the metric
/// `signet_would_refuse_total` and the console show what enforcing would refuse.
///
/// Refusals that protect the gateway rather than judge the client (an unroutable path, a framing
/// it cannot forward exactly, limits, timeouts, a store it cannot reach: anything not a 400, 401 or
/// 403 judgement) are made in either mode.
struct MonitoredGate: RouterMiddleware {
    typealias Context = SignetRequestContext
    let gate: RouteGate
    let metrics: SignetMetrics

    /// Judgements a `monitor` route forwards; the rest are refused as on an `enforce` route.
    static func isVerdict(_ code: SignetError.Code) -> Bool {
        [400, 401, 403].contains(code.httpStatus) && !gatewayRefusals.contains(code)
    }

    /// 400s about what the gateway can forward exactly, not about who sent it.
    private static let gatewayRefusals: Set<SignetError.Code> = [.pathAmbiguous, .requestInvalid, .malformedMessage]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var judged = false
        do {
            return try await gate.handle(request, context: context) { request, context in
                judged = true
                var context = context
                context.signet.verdict = "accepted"
                return try await next(request, context)
            }
        } catch let failure {
            guard !judged, let verdict = Verdict(failure) else { throw failure }
            metrics.recordRefusal(verdict.code, of: request.head, source: context.clientAddress, monitored: true)
            var context = context
            context.signet.identity = nil
            context.signet.verifiedMessage = nil
            context.signet.verdict = verdict.code.rawValue
            var forwarded = request
            if !verdict.withheld.isEmpty {
                var head = request.head
                for name in verdict.withheld { head.headerFields[name] = nil }
                forwarded = Request(head: head, body: request.body)
            }
            var response = try await next(forwarded, context)
            response.headers.append(contentsOf: verdict.advice)
            return response
        }
    }

    /// What a `monitor` route makes of a refusal its gate made, where it is a verdict
    /// (``isVerdict(_:)``); `nil` for one made in either mode. Both paths that run `monitor`
    /// routes — this gate and the event-loop data plane — forward what it says.
    struct Verdict {
        /// What enforcing would have refused the request with.
        let code: SignetError.Code
        /// Fields of the request that never reach the upstream (a DPoP route's token and proof).
        let withheld: [HTTPField.Name]
        /// What the refusal would have told the client for its next request (a fresh
        /// `DPoP-Nonce`), for the upstream's answer; not what would say this one failed.
        let advice: HTTPFields

        init?(_ refusal: any Error) {
            // A refusal with a challenge (DPoP's) is a verdict as a plain one is.
            let challenged = refusal as? ChallengedRefusal
            guard let error = (refusal as? SignetError) ?? challenged?.error, MonitoredGate.isVerdict(error.code) else { return nil }
            code = error.code
            withheld = challenged?.withheld ?? []
            var advice = challenged?.fields ?? HTTPFields()
            advice.removeAll { MonitoredGate.refusalOnly.contains($0.name) }
            self.advice = advice
        }
    }

    /// Fields that describe a refusal, never sent on the upstream's answer to a monitored request.
    static let refusalOnly: Set<HTTPField.Name> = [
        SignetRequestVerifier.signatureErrorField, SignetRequestVerifier.acceptSignatureSchemeField,
        SignetRequestVerifier.acceptSignatureAlgField,
    ]
}
