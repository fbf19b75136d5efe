// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// The console's tables in memory: the same orderings and limits as the database stores.
struct ConsoleState {
    var refusals: [RefusalRecord] = []
    var counts: [ActivityKey: Int] = [:]
    var audit: [AuditRecord] = []
    var sessions: [String: AdminSessionRecord] = [:]
    var nextID: Int64 = 1
    /// Every device by `(created_at in milliseconds, device id)`, ascending: the databases'
    /// `devices (created_at, device_id)` index, so a page is a binary search, not a sort.
    var deviceOrder: [DeviceOrderKey] = []
    /// Device ids per user, in registration order.
    var devicesByUser: [String: [String]] = [:]

    struct ActivityKey: Hashable {
        var minute: Int64
        var outcome: String
        var reason: String
    }

    struct DeviceOrderKey: Comparable {
        var millis: Int64
        var deviceID: String

        init(_ createdAt: Date, _ deviceID: String) {
            millis = Int64((createdAt.timeIntervalSince1970 * 1000).rounded(.down))
            self.deviceID = deviceID
        }

        static func < (lhs: Self, rhs: Self) -> Bool { (lhs.millis, lhs.deviceID) < (rhs.millis, rhs.deviceID) }
    }

    /// Devices register mostly in time order, so the insertion point is nearly always the end.
    mutating func index(_ device: DeviceRecord) {
        let key = DeviceOrderKey(device.createdAt, device.deviceID)
        deviceOrder.insert(key, at: firstIndex(notBelow: key))
        if let user = device.user { devicesByUser[user, default: []].append(device.deviceID) }
    }

    /// The first position whose key is not below `key`.
    func firstIndex(notBelow key: DeviceOrderKey) -> Int {
        if let last = deviceOrder.last, last < key { return deviceOrder.count }
        var low = 0
        var high = deviceOrder.count
        while low < high {
            let middle = (low + high) / 2
            if deviceOrder[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    mutating func append(_ record: AuditRecord) {
        var record = record
        record.id = nextID
        nextID += 1
        audit.append(record)
    }

    mutating func sweep(now: Date) -> Int {
        let before = refusals.count + counts.count + sessions.count
        let oldest = now.addingTimeInterval(-RefusalRecord.retention)
        refusals.removeAll { $0.at < oldest }
        if refusals.count > RefusalRecord.maximumKept { refusals.removeFirst(refusals.count - RefusalRecord.maximumKept) }
        let firstMinute = ActivityCount.minute(of: now.addingTimeInterval(-ActivityCount.retention))
        counts = counts.filter { $0.key.minute >= firstMinute }
        sessions = sessions.filter { $0.value.expiresAt > now }
        return before - refusals.count - counts.count - sessions.count
    }
}

extension MemoryStore {
    public func recordActivity(counts: [ActivityCount], refusals: [RefusalRecord], lastSeen: [String: Date]) async throws {
        state.withLock { state in
            for (deviceID, time) in lastSeen where state.devices[deviceID] != nil {
                state.devices[deviceID]!.lastSeenAt = max(state.devices[deviceID]!.lastSeenAt ?? time, time)
            }
            for count in counts {
                state.console.counts[.init(minute: count.minute, outcome: count.outcome, reason: count.reason), default: 0] +=
                    count.count
            }
            for var refusal in refusals {
                refusal.id = state.console.nextID
                state.console.nextID += 1
                state.console.refusals.append(refusal)
            }
        }
    }

    public func activityCounts(since minute: Int64) async throws -> [ActivityCount] {
        state.withLock { state in
            state.console.counts.filter { $0.key.minute >= minute }.map {
                ActivityCount(minute: $0.key.minute, outcome: $0.key.outcome, reason: $0.key.reason, count: $0.value)
            }
        }
    }

    public func refusals(reason: String?, before: Int64?, limit: Int) async throws -> [RefusalRecord] {
        state.withLock { state in
            Array(
                state.console.refusals.reversed().lazy.filter {
                    (reason == nil || $0.reason == reason) && (before == nil || $0.id < before!)
                }.prefix(limit)
            )
        }
    }

    public func appendAudit(_ record: AuditRecord) async throws {
        state.withLock { state in state.console.append(record) }
    }

    public func revokeDevice(id: String, at time: Date, by actor: String, source: String?) async throws -> Bool {
        state.withLock { state in
            guard state.devices[id] != nil else { return false }
            state.devices[id]!.status = .revoked
            state.devices[id]!.revokedAt = state.devices[id]!.revokedAt ?? time
            state.console.append(AuditRecord(at: time, actor: actor, action: "device.revoke", target: id, source: source))
            return true
        }
    }

    public func auditRecords(before: Int64?, limit: Int) async throws -> [AuditRecord] {
        state.withLock { state in
            Array(state.console.audit.reversed().lazy.filter { before == nil || $0.id < before! }.prefix(limit))
        }
    }

    public func createAdminSession(_ session: AdminSessionRecord) async throws {
        state.withLock { $0.console.sessions[session.idHash] = session }
    }

    public func adminSession(idHash: String, now: Date) async throws -> AdminSessionRecord? {
        state.withLock { state in state.console.sessions[idHash].flatMap { $0.expiresAt > now ? $0 : nil } }
    }

    public func deleteAdminSession(idHash: String) async throws {
        _ = state.withLock { $0.console.sessions.removeValue(forKey: idHash) }
    }

    public func listDevices(_ listing: DeviceListing) async throws -> [DeviceRecord] {
        state.withLock { state in
            if let search = listing.search {
                // The three exact lookups, as the databases' union of index lookups.
                var ids = Set(state.console.devicesByUser[search] ?? [])
                if state.devices[search] != nil { ids.insert(search) }
                if let id = state.deviceIDByKeyID[search] { ids.insert(id) }
                return ids.compactMap { state.devices[$0] }
                    .filter { listing.after?.precedes($0) ?? true }
                    .sorted { ConsoleState.DeviceOrderKey($0.createdAt, $0.deviceID) > .init($1.createdAt, $1.deviceID) }
                    .prefix(listing.limit).map { $0 }
            }
            // Newest first from just below the cursor.
            var end = state.console.deviceOrder.count
            if let after = listing.after {
                end = state.console.firstIndex(notBelow: .init(after.createdAt, after.deviceID))
            }
            return state.console.deviceOrder[max(0, end - listing.limit)..<end].reversed().compactMap { state.devices[$0.deviceID] }
        }
    }

    public func pinReport(id: String) async throws -> PinReportRecord? {
        state.withLock { state in state.pinReports[id] }
    }

    public func pinReportHosts(limit: Int) async throws -> [PinReportHostCount] {
        state.withLock { state in
            Dictionary(grouping: state.pinReports.values, by: \.hostname)
                .map { PinReportHostCount(hostname: $0.key, count: $0.value.reduce(0) { $0 + $1.count }) }
                .sorted { ($0.count, $1.hostname) > ($1.count, $0.hostname) }
                .prefix(limit).map { $0 }
        }
    }

    public func pinReportGroupCount() async throws -> Int {
        state.withLock { $0.pinReports.count }
    }
}
