// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// One stored pin failure report (the TrustKit/HPKP JSON as received, after validation).
public struct PinReportRecord: Sendable, Hashable {
    public var id: String
    public var receivedAt: Date
    /// The host whose pins failed, from the report.
    public var hostname: String
    /// The client address, when known.
    public var source: String?
    public var json: String

    public init(id: String, receivedAt: Date, hostname: String, source: String?, json: String) {
        self.id = id
        self.receivedAt = receivedAt
        self.hostname = hostname
        self.source = source
        self.json = json
    }

    /// How long reports are kept before a sweep deletes them.
    public static let retention: TimeInterval = 30 * 86_400
}
