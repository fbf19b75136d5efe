// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Pin failure reports that clients sent to `POST /signet/v1/pin-reports`, grouped
/// (``PinReportRecord``) and bounded in number.
public protocol PinReportStore: Sendable {
    /// Counts one report into its group (same ``PinReportRecord/id``: `count` up, `lastSeen` and
    /// `source` from this one), or opens the group with this record. When that makes more than
    /// `limit` groups, groups go until there are `limit`: first those reported once (the least
    /// recently seen of them), then the least recently seen of the rest; the group just opened stays.
    /// Evidence several reports agree on outlives a spray of one-off reports.
    ///
    /// - Returns: How many groups were dropped to stay within `limit`.
    @discardableResult
    func recordPinReport(_ report: PinReportRecord, limit: Int) async throws -> Int

    /// The groups, most recently seen first.
    func pinReports(limit: Int) async throws -> [PinReportRecord]
}
