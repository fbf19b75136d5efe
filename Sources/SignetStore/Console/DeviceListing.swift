// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A page of the device list: newest first, optionally only the devices one id names.
public struct DeviceListing: Sendable, Hashable {
    /// Where a page ends: the next page starts after this device.
    public struct Cursor: Sendable, Hashable {
        public var createdAt: Date
        public var deviceID: String

        public init(createdAt: Date, deviceID: String) {
            self.createdAt = createdAt
            self.deviceID = deviceID
        }

        /// `millis.deviceID`, for a link.
        public var text: String { "\(Int64((createdAt.timeIntervalSince1970 * 1000).rounded(.down))).\(deviceID)" }

        public init?(text: String) {
            guard let dot = text.firstIndex(of: "."), let millis = Int64(text[..<dot]) else { return nil }
            self.createdAt = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
            self.deviceID = String(text[text.index(after: dot)...])
        }
    }

    /// A device id, key id or user name, matched exactly; `nil` lists every device.
    public var search: String?
    public var after: Cursor?
    public var limit: Int

    public init(search: String? = nil, after: Cursor? = nil, limit: Int = 50) {
        self.search = search.flatMap { $0.isEmpty ? nil : $0 }
        self.after = after
        self.limit = max(1, min(limit, 500))
    }
}

extension DeviceListing.Cursor {
    /// Whether `device` sorts after this cursor (newest first, then device id descending).
    public func precedes(_ device: DeviceRecord) -> Bool {
        let millis = { (date: Date) in Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
        let created = millis(device.createdAt)
        let mine = millis(createdAt)
        return created < mine || (created == mine && device.deviceID < deviceID)
    }
}
