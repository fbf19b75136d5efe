// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SignetCore
import SignetMiddleware

/// A route's gate that is not a signature's — a token, a DPoP-bound token, a client attestation,
/// a client certificate, Play Integrity, a legacy scheme — as the event-loop data plane runs it
/// (``LoopGate/authenticating(_:)``): the very ``RequestAuthenticator`` Hummingbird's path puts on
/// the route, run on the complete request in a task on the connection's loop, with the context
/// Hummingbird's stages before the router would have made (the routed path, the target as sent,
/// the client's address, the connection for its certificate), within the request's time for the
/// store (``StoreBudget``). Where the mode needs a signature (`play-integrity`), the head is
/// screened as every signed route's is (``LoopScreen``).
final class LoopAuthenticator: Sendable {
    let gate: any RequestAuthenticator<SignetRequestContext>

    init(gate: any RequestAuthenticator<SignetRequestContext>) {
        self.gate = gate
    }

    /// Judges the complete request, its path the routed one as routing leaves it for a gate:
    /// admitted and counted, with the request as the gate left it, or its refusal as the client
    /// should see it (`SignetError` or `ChallengedRefusal`).
    nonisolated(nonsending) func judge(_ loop: LoopRequest, maximumBodyBytes: Int, storeTimeout: Duration, logger: Logger) async throws -> LoopAdmission {
        try await StoreBudget.within(storeTimeout) {
            var request = Request(head: loop.routedHead, body: RequestBody(buffer: loop.body))
            var context = SignetRequestContext(source: ApplicationRequestContextSource(channel: loop.channel, logger: logger))
            context.signet.clientAddress = loop.client
            context.signet.receivedTarget = loop.receivedTarget
            context.signet.routedPath = loop.routedPath
            context.signet.isComplete = true
            let admission = try await gate.authenticate(&request, context: &context)
            gate.metrics?.recordAccepted(admission.identity)
            // Bounded as `GatewayProxy` bounds what it forwards, whatever the gate made of it.
            let forwarded = try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body")
            return LoopAdmission(
                identity: admission.identity,
                message: context.signet.verifiedMessage,
                forwarded: (request.head, forwarded),
                answerFields: admission.answerFields,
                answering: admission.answering
            )
        }
    }
}
