// SPDX-License-Identifier: Apache-2.0

/// A route's gate as the event-loop data plane runs it, on the connection's loop, with the
/// request complete (``GatewayFeature/loopGate(for:)``). A route whose gate has none — a token,
/// a password, a client certificate, a `monitor` route — is answered by Hummingbird
/// (``GatewayFeature/gate(for:listener:)``), so the data plane never decides less than the gate
/// would.
enum LoopGate: Sendable {
    /// Nothing to judge (an `open` route): counted as admitted, and forwarded.
    case open(admit: @Sendable () -> Void)
    /// An RFC 9421 signature, verified as the route's verification middleware verifies it.
    case verifying(LoopVerifier)
}
