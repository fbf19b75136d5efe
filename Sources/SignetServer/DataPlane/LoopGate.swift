// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// A route's gate as the event-loop data plane runs it, on the connection's loop, with the
/// request complete (``GatewayFeature/loopGate(for:listener:)``). A route whose owner gives none
/// is answered by Hummingbird
/// (``GatewayFeature/gate(for:listener:)``), so the data plane never decides less than the gate
/// would.
enum LoopGate: Sendable {
    /// Nothing to judge (an `open` route): counted as admitted, and forwarded.
    case open(admit: @Sendable () -> Void)
    /// An RFC 9421 signature, verified as the route's verification middleware verifies it, its
    /// head screened while its body comes.
    case verifying(LoopVerifier)
    /// Any other gate: the route's own authenticator, run on the complete request (its head
    /// screened where its mode needs a signature, as every route's that does: ``LoopScreen``).
    case authenticating(LoopAuthenticator)
}

/// A complete request as the data plane hands it to a gate, in the task that judges it.
struct LoopRequest: Sendable {
    /// The head as received: its path the client's.
    let head: HTTPRequest
    let routedPath: String
    let body: ByteBuffer
    /// The target as the client sent it, where routing normalised it: what a signature covers.
    let receivedTarget: String?
    let client: String?
    let channel: any Channel

    /// The head as routing leaves it for a gate: its path the routed one.
    var routedHead: HTTPRequest {
        var routed = head
        routed.path = routedPath
        return routed
    }
}

/// What a gate on the data plane admitted: who the request is from, and what it needs on its way.
/// A class: it passes through the judging task's frames, its promise and its callback, and each
/// copy of an identity and a message retained a few dozen references.
final class LoopAdmission: Sendable {
    let identity: SignetIdentity
    /// What verified, where the gate verified a message (an answer signed is bound to it).
    let message: ServerMessage?
    /// The request as the gate rewrote it (credentials removed, a body decrypted, a query rebuilt);
    /// `nil` where it goes upstream as received.
    let forwarded: (head: HTTPRequest, body: ByteBuffer)?
    /// Set on the answer's head (``Admission/answerFields``).
    let answerFields: HTTPFields
    /// Applied to the whole answer (``Admission/answering``): the answer is held whole for it.
    let answering: (@Sendable (inout Response) async throws -> Void)?

    init(
        identity: SignetIdentity,
        message: ServerMessage?,
        forwarded: (head: HTTPRequest, body: ByteBuffer)? = nil,
        answerFields: HTTPFields = [:],
        answering: (@Sendable (inout Response) async throws -> Void)? = nil
    ) {
        self.identity = identity
        self.message = message
        self.forwarded = forwarded
        self.answerFields = answerFields
        self.answering = answering
    }
}

extension GatewayFeature {
    /// The feature's own gate for `access` as the data plane runs it (``LoopAuthenticator``): what
    /// a feature whose gates are ``RequestAuthenticator``s returns from ``loopGate(for:listener:)``.
    /// The data plane runs `authenticate` alone, so such a gate decides everything there: a gate
    /// whose `handle` does more than ``RequestAuthenticator/admit(_:context:next:)`` must not opt in.
    /// A mode with a signature (`play-integrity`) has its heads screened as every signed route's
    /// (``LoopScreen``).
    func authenticatingLoopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        guard let gate = (try? gate(for: access, listener: listener)) as? any RequestAuthenticator<SignetRequestContext> else { return nil }
        return .authenticating(LoopAuthenticator(gate: gate))
    }
}
