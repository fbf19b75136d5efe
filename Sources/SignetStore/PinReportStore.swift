// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Pin failure reports that clients sent to `POST /signet/v1/pin-reports`.
public protocol PinReportStore: Sendable {
    func storePinReport(_ report: PinReportRecord) async throws
    /// The newest reports first.
    func pinReports(limit: Int) async throws -> [PinReportRecord]
}
