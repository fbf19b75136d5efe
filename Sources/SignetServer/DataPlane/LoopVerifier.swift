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
    /// The route's middleware: keys from the store, or delivered with the request where the
    /// route takes them (`Signature-Key`, a known agent's `Signature-Agent`), whose heads are not
    /// screened on either path (``DataPlane/Snapshot/screen(_:_:)``).
    let gate: SignetVerificationMiddleware<SignetRequestContext>
    let storeTimeout: Duration
    let metrics: SignetMetrics

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
