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
struct LoopAuthenticator: Sendable {
    let gate: any RequestAuthenticator<SignetRequestContext>

    /// The request as the gate admitted it: who it is from, and what goes upstream — the gate may
    /// have rewritten it (credentials removed, a body decrypted, a query rebuilt).
    struct Admitted: Sendable {
        let identity: SignetIdentity
        /// What verified, where the gate verified a message (an answer signed is bound to it).
        let message: ServerMessage?
        let head: HTTPRequest
        let body: ByteBuffer
        /// Set on the answer's head (``Admission/answerFields``).
        let answerFields: HTTPFields
        /// Applied to the whole answer (``Admission/answering``): the answer is held whole for it.
        let answering: (@Sendable (inout Response) async throws -> Void)?
    }

    /// Judges the complete request: admitted and counted, or its refusal as the client should see
    /// it (`SignetError` or `ChallengedRefusal`).
    ///
    /// - Parameters:
    ///   - head: The request's head as routing left it: its path the routed one.
    ///   - receivedTarget: The target as the client sent it, where routing normalised it.
    func judge(
        _ head: HTTPRequest,
        body: ByteBuffer,
        receivedTarget: String?,
        client: String?,
        channel: any Channel,
        maximumBodyBytes: Int,
        storeTimeout: Duration,
        logger: Logger
    ) async throws -> Admitted {
        try await StoreBudget.within(storeTimeout) {
            var request = Request(head: head, body: RequestBody(buffer: body))
            var context = SignetRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
            context.signet.clientAddress = client
            context.signet.receivedTarget = receivedTarget
            context.signet.routedPath = head.path
            context.signet.isComplete = true
            let admission = try await gate.authenticate(&request, context: &context)
            gate.metrics?.recordAccepted(admission.identity)
            // Bounded as `GatewayProxy` bounds what it forwards, whatever the gate made of it.
            let forwarded = try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body")
            return Admitted(
                identity: admission.identity,
                message: context.signet.verifiedMessage,
                head: request.head,
                body: forwarded,
                answerFields: admission.answerFields,
                answering: admission.answering
            )
        }
    }
}
