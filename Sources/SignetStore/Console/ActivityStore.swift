// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Per-minute request counts and the latest refusals, written in batches by the gateway and read by
/// the operator console. Several gateway instances add into the same minutes.
public protocol ActivityStore: Sendable {
    /// Adds `counts` to the stored minutes, appends `refusals` (their ids are assigned here), and
    /// moves each device's last-seen time forward to the one given (never back).
    func recordActivity(counts: [ActivityCount], refusals: [RefusalRecord], lastSeen: [String: Date]) async throws
    /// Every count from `minute` on, in no particular order.
    func activityCounts(since minute: Int64) async throws -> [ActivityCount]
    /// The newest refusals first, older than `before` (an id) when given, of one reason when given.
    func refusals(reason: String?, before: Int64?, limit: Int) async throws -> [RefusalRecord]
}
