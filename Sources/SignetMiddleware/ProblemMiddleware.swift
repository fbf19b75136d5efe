// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import Logging
import SignetCore

/// Renders every error thrown beneath it, once, as RFC 9457 problem+json with its reason code.
///
/// Put it first. A `SignetError` keeps its code (and, with `debug`, the signature base the verifier
/// built); Hummingbird's own errors map to the matching code; anything else becomes `500
/// internal_error` and is logged here, never shown to the client.
public struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    public let debug: Bool
    public let metrics: SignetMetrics?

    public init(debug: Bool = false, metrics: SignetMetrics? = nil) {
        self.debug = debug
        self.metrics = metrics
    }

    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let problem = ProblemResponse.signetError(from: error)
            let signet = context as? any SignetRequestContextProtocol
            let record = signet?.signet.accessRecord
            record?.update { $0.reason = problem.code.rawValue }
            if problem.code == .internalError {
                context.logger.error("signet internal error", metadata: ["error": .string(String(describing: type(of: error)))])
            } else {
                // Where an access log line will say it (the gateway), this one is for debugging only.
                context.logger.log(
                    level: record != nil ? .debug : .info,
                    "signet rejected request",
                    metadata: [
                        "reason": .string(problem.code.rawValue), "method": .string(request.method.rawValue),
                        "path": .string(request.uri.path),
                    ]
                )
            }
            if let metrics {
                metrics.recordRefusal(problem.code, of: request.head, keyID: signet?.signet.identity?.keyID, source: signet?.clientAddress)
            }
            var response = ProblemResponse.make(problem, debug: debug, challenges: ProblemResponse.challenges(of: error))
            if let refusal = error as? MethodNotAllowed { response.headers[.allow] = refusal.allow }
            if let refusal = error as? ChallengedRefusal { response.headers.append(contentsOf: refusal.fields) }
            return response
        }
    }
}
