// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Receipts of attested devices, and the refresher's schedule over them.
///
/// Saving a receipt also sets the device's risk metric (``DeviceRecord/riskMetric``) in the same
/// step, so what verification reads and what the receipt says cannot come apart.
public protocol ReceiptStore: Sendable {
    /// Inserts or replaces the device's receipt, unless the stored one was created later (two
    /// instances exchanging at once keep the newer).
    func saveReceipt(_ record: ReceiptRecord) async throws
    func receipt(deviceID: String) async throws -> ReceiptRecord?
    /// Unexpired receipts of active devices whose `refreshAt` has come: those that never failed
    /// first (new devices wait for no backlog of failing ones), then by `refreshAt`.
    func receiptsDue(at now: Date, limit: Int) async throws -> [ReceiptRecord]
    /// Takes the refresh of a due receipt for this instance: moves `refreshAt` from `dueAt` to
    /// `leaseUntil` only if no other instance did. False when another took it.
    func claimReceiptRefresh(deviceID: String, dueAt: Date, leaseUntil: Date) async throws -> Bool
    /// Records a failed exchange — the error, one more failure, the next attempt — only while this
    /// instance's lease (`leasedUntil`) still holds, so it never undoes another's success.
    func recordReceiptFailure(deviceID: String, error: String, retryAt: Date, leasedUntil: Date) async throws
}
