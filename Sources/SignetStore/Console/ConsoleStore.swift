// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What the operator console reads beyond the stores a request uses: pages of devices, pin reports
/// by host, and (through its parents) activity, audit and sessions.
public protocol ConsoleStore: ActivityStore, AuditStore, AdminSessionStore {
    /// A page of devices, paged on an index (`created_at, device_id`), never a scan of the table.
    func listDevices(_ listing: DeviceListing) async throws -> [DeviceRecord]
    /// One group of pin reports.
    func pinReport(id: String) async throws -> PinReportRecord?
    /// Reports counted by host (the sum of its groups' counts), most reported first.
    func pinReportHosts(limit: Int) async throws -> [PinReportHostCount]
    /// How many groups of pin reports are kept (against the configured bound).
    func pinReportGroupCount() async throws -> Int
}
