// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import Logging
import SignetCore

/// Verifies every request under it and puts the client's ``SignetIdentity`` into the context.
///
/// Usable on its own in any Hummingbird app whose context adopts ``SignetRequestContextProtocol``:
///
/// ```swift
/// let router = Router(context: SignetRequestContext.self)
/// router.group("api").add(middleware: SignetVerificationMiddleware(verifier: requestVerifier))
///     .post("scores") { request, context in "hello \(context.signetIdentity!.keyID)" }
/// ```
///
/// Failures answer RFC 9457 problem+json with the reason code (and the signature base when `debug`).
public struct SignetVerificationMiddleware<Context: SignetRequestContextProtocol>: RouterMiddleware {
    public let verifier: SignetRequestVerifier
    public let requirement: AccessRequirement
    public let debug: Bool
    public let metrics: SignetMetrics?
    private let clock: @Sendable () -> Date

    public init(
        verifier: SignetRequestVerifier,
        requirement: AccessRequirement = .verified,
        debug: Bool = false,
        metrics: SignetMetrics? = nil,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.verifier = verifier
        self.requirement = requirement
        self.debug = debug
        self.metrics = metrics
        self.clock = clock
    }

    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var request = request
        var context = context
        let started = ContinuousClock.now
        do {
            let identity = try await verifier.verify(&request, now: clock())
            try requirement.check(identity)
            metrics?.recordVerification(ContinuousClock.now - started)
            metrics?.record(outcome: "accepted", reason: nil)
            context.signetIdentity = identity
        } catch let error as SignetError {
            metrics?.record(outcome: "rejected", reason: error.code.rawValue)
            context.logger.info(
                "signet rejected request",
                metadata: ["reason": .string(error.code.rawValue), "path": .string(request.uri.path)]
            )
            return ProblemResponse.make(error, debug: debug)
        }
        return try await next(request, context)
    }
}
