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

    /// Counts the attested key under each of its issuers (the batch key, and any intermediate between
    /// it and the root: a leaked batch key hidden under fresh intermediates of its own is still
    /// counted under itself) and judges by the highest count; throws `attestation_batch_exceeded`
    /// above the blocking threshold when enforcing. Each key counts once, however often it is
    /// presented; a refused one is counted too, so a leaked batch stays over.
    public func admit(batches: [String], key: String, now: Date) async throws -> Verdict {
        var count = 0
        for batch in Set(batches) {
            count = max(count, try await store.recordAttestation(batch: batch, deviceID: key, now: now, window: window))
        }
        if count > blockAt {
            // The count stays with the operator: a probing attacker learns only the refusal.
            if mode == .enforce {
                throw SignetError(.attestationBatchExceeded, "this device's attestation batch is refused for now")
            }
            return .overLimit(count: count)
        }
        return count > flagAt ? .flagged(count: count) : .normal
    }
}
