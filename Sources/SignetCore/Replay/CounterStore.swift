// SPDX-License-Identifier: Apache-2.0

/// Remembers each device's signed counter (App Attest's) so every counter is accepted at most once.
///
/// The second replay guard beside ``NonceStore``: the verifier advances the counter after the
/// signature verified, when the algorithm's evidence carries one. Implementations apply
/// ``CounterWindow``'s rule atomically (persistent stores in one statement).
public protocol CounterStore: Sendable {
    /// Accepts `value` for the device under a reorder window of `window` counters (0: strictly
    /// increasing). Returns `false`, changing nothing, for a counter used already or too old.
    func advanceCounter(deviceID: String, to value: UInt64, window: Int) async throws -> Bool
}
