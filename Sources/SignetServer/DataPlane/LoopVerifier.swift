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

    /// The identity of the complete request, counted as admitted, and the message that verified
    /// (what a signed answer is bound to); or its refusal, as the client should see it
    /// (`SignetError` or `ChallengedRefusal`).
    func judge(_ head: HTTPRequest, body: ByteBuffer, receivedTarget: String?) async throws -> (SignetIdentity, ServerMessage) {
        let verdict = try await StoreBudget.within(storeTimeout) {
            var request = Request(head: head, body: RequestBody(buffer: body))
            return try await gate.judge(&request, receivedTarget: receivedTarget, screened: true)
        }
        metrics.recordAccepted(verdict.0)
        return verdict
    }
}
