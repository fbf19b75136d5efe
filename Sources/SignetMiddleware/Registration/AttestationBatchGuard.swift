// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore

/// The defence against leaked attestation keys (a keybox sold to emulate genuine devices): counts
/// the devices each batch certificate attested in a sliding window, across instances, and above a
/// warning threshold flags the device, above a blocking threshold refuses it — in shadow mode (the
/// default) it only flags, so an operator sees what enforcing would refuse before it does.
public struct AttestationBatchGuard: Sendable {
    public enum Mode: String, Sendable {
        /// Count and flag, never refuse.
        case shadow
        /// Refuse above ``blockAt`` (`attestation_batch_exceeded`).
        case enforce
    }

    /// What the count says of one attestation.
    public enum Verdict: Sendable, Equatable {
        case normal
        /// Above ``flagAt``: registered, marked for review.
        case flagged(count: Int)
        /// Above ``blockAt``: refused when enforcing, flagged in shadow mode.
        case overLimit(count: Int)
    }

    public var store: any AttestationBatchStore
    public var window: TimeInterval
    public var flagAt: Int
    public var blockAt: Int
    public var mode: Mode

    public init(store: any AttestationBatchStore, window: TimeInterval, flagAt: Int, blockAt: Int, mode: Mode = .shadow) {
        self.store = store
        self.window = window
        self.flagAt = flagAt
        self.blockAt = blockAt
        self.mode = mode
    }

    /// Counts the attestation and judges it; throws `attestation_batch_exceeded` above the blocking
    /// threshold when enforcing. A refused device is counted too: a leaked batch stays over.
    public func admit(batch: String, deviceID: String, now: Date) async throws -> Verdict {
        let count = try await store.recordAttestation(batch: batch, deviceID: deviceID, now: now, window: window)
        if count > blockAt {
            if mode == .enforce {
                throw SignetError(
                    .attestationBatchExceeded,
                    "this device's attestation batch attested \(count) devices in \(Int(window)) s; at most \(blockAt) are taken"
                )
            }
            return .overLimit(count: count)
        }
        return count > flagAt ? .flagged(count: count) : .normal
    }
}
