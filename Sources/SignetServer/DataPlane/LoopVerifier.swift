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
/// every signed route's is (``LoopScreen``). A class, as every gate the data plane holds: a
/// route's gate is looked up twice a request, and a copy of the middleware retains each of its
/// dozens of references.
final class LoopVerifier: Sendable {
    /// The route's middleware: keys from the store, or delivered with the request where the
    /// route takes them (`Signature-Key`, a known agent's `Signature-Agent`), whose heads are not
    /// screened on either path (``DataPlane/Snapshot/screen(_:_:)``).
    let gate: SignetVerificationMiddleware<SignetRequestContext>
    let storeTimeout: Duration
    let metrics: SignetMetrics

    init(gate: SignetVerificationMiddleware<SignetRequestContext>, storeTimeout: Duration, metrics: SignetMetrics) {
        self.gate = gate
        self.storeTimeout = storeTimeout
        self.metrics = metrics
    }

    /// Who the complete request is from, and the message that verified (what a signed answer is
    /// bound to), counted; or its refusal, as the client should see it (`SignetError` or
    /// `ChallengedRefusal`). The request goes upstream as received.
    nonisolated(nonsending) func judge(_ request: LoopRequest) async throws -> LoopAdmission {
        let (identity, message) = try await StoreBudget.within(storeTimeout) {
            try await gate.judgeComplete(head: request.head, body: request.body, receivedTarget: request.receivedTarget)
        }
        metrics.recordAccepted(identity)
        return LoopAdmission(identity: identity, message: message)
    }
}
