// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// A signature route's gate as the event-loop data plane runs it (``LoopGate/verifying(_:)``):
/// the same verification middleware Hummingbird's path puts on the route, run in a task on the
/// connection's loop (``LoopTaskExecutor``) on the complete request, within the request's time for
/// the store (``StoreBudget``), as ``RequestCompletionResponder`` does. Its head is screened as
/// every signed route's is (``LoopScreen``).
struct LoopVerifier: Sendable {
    let gate: SignetVerificationMiddleware<SignetRequestContext>
    /// The route takes keys a request delivers (`Signature-Key`, `Signature-Agent`): such a
    /// request is resolved from its whole signature, and is Hummingbird's.
    let takesDeliveredKeys: Bool
    let storeTimeout: Duration
    let metrics: SignetMetrics

    /// Whether the data plane verifies `head`'s request; one delivering a key goes to Hummingbird.
    func takes(_ head: HTTPRequest) -> Bool {
        !takesDeliveredKeys
            || (head.headerFields[RequestCompletionResponder.signatureKeyField] == nil
                && head.headerFields[RequestCompletionResponder.signatureAgentField] == nil)
    }

    /// Who the complete request is from, and the message that verified (what a signed answer is
    /// bound to), counted; or its refusal, as the client should see it (`SignetError` or
    /// `ChallengedRefusal`).
    func judge(_ head: HTTPRequest, body: ByteBuffer, receivedTarget: String?) async throws -> (SignetIdentity, ServerMessage) {
        let verified = try await StoreBudget.within(storeTimeout) {
            var request = Request(head: head, body: RequestBody(buffer: body))
            return try await gate.judge(&request, receivedTarget: receivedTarget, screened: true)
        }
        metrics.recordAccepted(verified.0)
        return verified
    }
}
