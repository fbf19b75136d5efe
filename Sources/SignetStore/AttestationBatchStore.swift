// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Counts device attestations per batch certificate (an Android attestation intermediate, shared by
/// the keyboxes of one production batch) in a sliding window, in the store so that every gateway
/// instance counts the same: one batch attesting far more devices than a batch can hold is the
/// sign of a leaked keybox.
public protocol AttestationBatchStore: Sendable {
    /// Records that `deviceID` attested under `batch` at `now` (once per device), and returns how
    /// many devices attested under it in the `window` seconds up to `now`, this one included.
    func recordAttestation(batch: String, deviceID: String, now: Date, window: TimeInterval) async throws -> Int
}

/// How long attestation records are kept: the longest window a gateway may count over.
public enum AttestationBatchRetention {
    public static let seconds: TimeInterval = 30 * 86_400
}
