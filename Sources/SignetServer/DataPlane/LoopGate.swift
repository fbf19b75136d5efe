// SPDX-License-Identifier: Apache-2.0
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
