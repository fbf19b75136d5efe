// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// A signature route's gate as the event-loop data plane runs it (``LoopGate/verifying(_:)``):
/// the same verification middleware Hummingbird's path puts on the route, run in a task on the
/// connection's loop (``LoopTaskExecutor``) — the head screened when it arrives, the request
/// verified when it is complete, each within the request's time for the store (``StoreBudget``),
/// as ``RequestCompletionResponder`` does.
struct LoopVerifier: Sendable {
    let gate: SignetVerificationMiddleware<SignetRequestContext>
    /// The route takes keys a request delivers (`Signature-Key`, `Signature-Agent`): such a
    /// request is resolved from its whole signature, and is Hummingbird's.
    let takesDeliveredKeys: Bool
    let storeTimeout: Duration
    let metrics: SignetMetrics
    let clock: @Sendable () -> Date

    /// Whether the data plane verifies `head`'s request; one delivering a key goes to Hummingbird.
    func takes(_ head: HTTPRequest) -> Bool {
        !takesDeliveredKeys
            || (head.headerFields[RequestCompletionResponder.signatureKeyField] == nil
                && head.headerFields[RequestCompletionResponder.signatureAgentField] == nil)
    }

    /// Refuses, from its head alone, a request that cannot verify (``SignetRequestVerifier/screen(_:receivedTarget:requirement:signatureKeys:now:)``).
    func screen(_ head: HTTPRequest, receivedTarget: String?) async throws {
        try await StoreBudget.within(storeTimeout) {
            try await gate.verifier.screen(
                Request(head: head, body: RequestBody(buffer: ByteBuffer())),
                receivedTarget: receivedTarget,
                requirement: gate.requirement,
                now: clock()
            )
        }
    }

    /// What the gate made of a complete request.
    enum Verdict: Sendable {
        /// Verified: who it is from, and the message that verified (what a signed answer is bound to).
        case admitted(SignetIdentity, ServerMessage)
        /// Its head cannot verify: Hummingbird's to refuse, as from its head.
        case screenedOut
    }

    /// The verdict on the complete request, counted where admitted; or its refusal, as the client
    /// should see it (`SignetError` or `ChallengedRefusal`).
    ///
    /// - Parameter screen: The request has a body whose head was not screened while it was read.
    ///   Hummingbird's path screens every such head first; here the screen runs only when the
    ///   verify refused — a request that verifies passes every check the screen makes, so the
    ///   screen could only have refused it — and a head it refuses is Hummingbird's to refuse, for
    ///   what the screen finds before anything the verify weighs first (the key before the window).
    ///   Not after the store failed: the request has had its time for the store.
    func judge(_ head: HTTPRequest, body: ByteBuffer, receivedTarget: String?, screen: Bool) async throws -> Verdict {
        let verified: (SignetIdentity, ServerMessage)
        do {
            verified = try await StoreBudget.within(storeTimeout) {
                var request = Request(head: head, body: RequestBody(buffer: body))
                return try await gate.judge(&request, receivedTarget: receivedTarget, screened: true)
            }
        } catch {
            guard screen, ProblemResponse.signetError(from: error).code != .storeUnavailable else { throw error }
            do { try await self.screen(head, receivedTarget: receivedTarget) } catch { return .screenedOut }
            throw error
        }
        metrics.recordAccepted(verified.0)
        return .admitted(verified.0, verified.1)
    }
}
