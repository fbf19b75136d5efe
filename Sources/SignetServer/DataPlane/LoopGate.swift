// SPDX-License-Identifier: Apache-2.0

/// A route's gate as the event-loop data plane runs it: synchronously, on the connection's loop,
/// with the request complete. Only a gate with nothing to await has one (an `open` route's); a
/// route whose gate verifies, reads the store or asks another service is answered by Hummingbird
/// (``GatewayFeature/gate(for:listener:)``), so the data plane never decides less than the gate
/// would.
struct LoopGate: Sendable {
    /// Counts the request as admitted; the data plane forwards it.
    let admit: @Sendable () -> Void
}
