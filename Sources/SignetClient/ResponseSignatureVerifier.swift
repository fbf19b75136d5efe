// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Checks the gateway's signature on a response (label `gateway`, RFC 9421 §2.4 `;req`): over its
/// status and bound to the request's own signature, so an old signed answer replayed against a new
/// request does not verify. Used by ``SignetClient`` and, for apps on `URLSession`, on a
/// `URLResponse` (``verify(_:body:for:now:)``).
public struct ResponseSignatureVerifier: Sendable {
    /// The gateway's response keys: configured, or from the trust document in force.
    public var keys: KeyRing

    public init(keys: KeyRing) {
        self.keys = keys
    }

    /// Verifies `response`, answering `request` (as signed and sent), off the caller's actor
    /// (`@concurrent`: an app on the main actor does not hash the body there).
    ///
    /// - Throws: `response_signature_invalid`, saying why.
    @concurrent public func verify(_ response: HTTPMessage, for request: HTTPMessage, now: Date) async throws -> VerifiedSignature {
        var policy = VerificationPolicy.permissive
        policy.selection = .label("gateway")
        policy.componentRules = [
            .init(forRequests: false, all: [.status, try ComponentIdentifier(parsing: "\"signature\";req")])
        ]
        let verifier = MessageVerifier(keys: keys, policy: policy, nonces: nil)
        do {
            return try await verifier.verify(response, relatedRequest: request, now: now)
        } catch let error as SignetError {
            throw SignetError(.responseSignatureInvalid, "the response signature does not verify: \(error)")
        }
    }
}
