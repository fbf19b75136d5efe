// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore
import SignetTestSupport
import Testing

/// What the operator console reads and the gateway writes for it, unchanged against every store.
@Suite(.awaitsCleanups) struct ConsoleStoreConformanceTests {
    typealias Kind = StoreConformanceTests.Kind
    static let kinds = StoreConformanceTests.kinds
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    func refusal(
        _ reason: String,
        at offset: TimeInterval,
        keyID: String? = nil,
        instance: String? = nil,
        monitored: Bool = false
    ) -> RefusalRecord {
        RefusalRecord(
            at: t0.addingTimeInterval(offset),
            reason: reason,
            status: 401,
            method: "POST",
            path: "/scores",
            keyID: keyID,
            source: "192.0.2.7",
            instance: instance,
            monitored: monitored
        )
    }

    @Test(arguments: kinds)
    func countsAddUpAcrossBatchesAndRefusalsPageNewestFirst(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let minute = ActivityCount.minute(of: t0)
        try await store.recordActivity(
            counts: [
                ActivityCount(minute: minute, outcome: "accepted", count: 5),
                ActivityCount(minute: minute, outcome: "rejected", reason: "signature_invalid", count: 2),
            ],
            refusals: [refusal("signature_invalid", at: 1, keyID: "k1"), refusal("signature_invalid", at: 2)],
            lastSeen: [:]
        )
        // A second instance adds into the same minute.
        try await store.recordActivity(
            counts: [
                ActivityCount(minute: minute, outcome: "accepted", count: 3),
                ActivityCount(minute: minute + 1, outcome: "rejected", reason: "nonce_replayed", count: 1),
            ],
            refusals: [refusal("nonce_replayed", at: 61, instance: "gw-b", monitored: true)],
            lastSeen: [:]
        )
        let counts = Set(try await store.activityCounts(since: minute))
        #expect(
            counts == [
                ActivityCount(minute: minute, outcome: "accepted", count: 8),
                ActivityCount(minute: minute, outcome: "rejected", reason: "signature_invalid", count: 2),
                ActivityCount(minute: minute + 1, outcome: "rejected", reason: "nonce_replayed", count: 1),
            ]
        )
        #expect(try await store.activityCounts(since: minute + 1).map(\.count) == [1])

        let all = try await store.refusals(reason: nil, before: nil, limit: 10)
        #expect(all.map(\.reason) == ["nonce_replayed", "signature_invalid", "signature_invalid"])
        #expect(all[0].id > all[1].id && all[1].id > all[2].id)
        #expect(all[2].keyID == "k1" && all[1].keyID == nil && all[2].source == "192.0.2.7")
        #expect(all[0].instance == "gw-b" && all[1].instance == nil, "the instance that refused, when named")
        #expect(all[0].monitored && !all[1].monitored, "a monitor route's would-be refusal is kept apart")
        #expect(all[2].at == t0.addingTimeInterval(1) && all[2].status == 401 && all[2].path == "/scores")
        let page = try await store.refusals(reason: nil, before: all[0].id, limit: 1)
        #expect(page == [all[1]])
        #expect(try await store.refusals(reason: "signature_invalid", before: nil, limit: 10) == [all[1], all[2]])
        #expect(try await store.refusals(reason: "signature_invalid", before: all[1].id, limit: 10) == [all[2]])
        #expect(try await store.refusals(reason: "key_unknown", before: nil, limit: 10).isEmpty)
    }

    @Test(arguments: kinds)
    func aSweepDropsOldRefusalsCountsAndExpiredSessions(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let now = t0.addingTimeInterval(RefusalRecord.retention + 3_600)
        try await store.recordActivity(
            counts: [
                ActivityCount(minute: ActivityCount.minute(of: t0), outcome: "accepted", count: 1),
                ActivityCount(minute: ActivityCount.minute(of: now), outcome: "accepted", count: 1),
            ],
            refusals: [refusal("signature_invalid", at: 0), refusal("key_unknown", at: RefusalRecord.retention + 60)],
            lastSeen: [:]
        )
        try await store.createAdminSession(
            AdminSessionRecord(idHash: "old", csrfToken: "c1", actor: "admin-token", createdAt: t0, expiresAt: now)
        )
        try await store.createAdminSession(
            AdminSessionRecord(
                idHash: "live",
                csrfToken: "c2",
                actor: "admin-token",
                createdAt: t0,
                expiresAt: now.addingTimeInterval(60)
            )
        )
        #expect(try await store.adminSession(idHash: "old", now: now) == nil)
        #expect(try await store.adminSession(idHash: "live", now: now)?.csrfToken == "c2")
        _ = try await store.sweep(now: now)
        #expect(try await store.refusals(reason: nil, before: nil, limit: 10).map(\.reason) == ["key_unknown"])
        #expect(try await store.activityCounts(since: 0).map(\.minute) == [ActivityCount.minute(of: now)])
        #expect(try await store.adminSession(idHash: "live", now: now) != nil)
        try await store.deleteAdminSession(idHash: "live")
        #expect(try await store.adminSession(idHash: "live", now: now) == nil)
    }

    @Test(arguments: kinds)
    func theAuditLogKeepsEveryChangeNewestFirst(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        for (index, action) in ["console.sign-in", "device.revoke", "console.sign-out"].enumerated() {
            try await store.appendAudit(
                AuditRecord(
                    at: t0.addingTimeInterval(Double(index)),
                    actor: "admin-token",
                    action: action,
                    target: index == 1 ? "dev_1" : "",
                    source: "127.0.0.1"
                )
            )
        }
        let entries = try await store.auditRecords(before: nil, limit: 10)
        #expect(entries.map(\.action) == ["console.sign-out", "device.revoke", "console.sign-in"])
        #expect(entries[1].target == "dev_1" && entries[1].actor == "admin-token" && entries[1].source == "127.0.0.1")
        #expect(entries[1].at == t0.addingTimeInterval(1))
        _ = try await store.sweep(now: t0.addingTimeInterval(400 * 86_400))
        #expect(try await store.auditRecords(before: entries[0].id, limit: 1) == [entries[1]])
    }

    @Test(arguments: kinds)
    func aRevocationAndItsAuditEntryAreOneChange(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        try await store.registerDevice(try StoreConformanceTests.device("dev_a"))
        try await store.registerDevice(try StoreConformanceTests.device("dev_b"))

        // No such device: nothing revoked, nothing audited.
        #expect(try await store.revokeDevice(id: "dev_x", at: t0, by: "admin-token 0123456789ab", source: nil) == false)
        #expect(try await store.auditRecords(before: nil, limit: 10).isEmpty)

        #expect(try await store.revokeDevice(id: "dev_a", at: t0, by: "admin-token 0123456789ab", source: "192.0.2.1"))
        var device = try #require(try await store.device(id: "dev_a"))
        #expect(device.status == .revoked && device.revokedAt == t0)
        #expect(try await store.device(id: "dev_b")?.status == .active)
        var entries = try await store.auditRecords(before: nil, limit: 10)
        #expect(entries.count == 1)
        #expect(entries.first?.action == "device.revoke" && entries.first?.target == "dev_a")
        #expect(entries.first?.actor == "admin-token 0123456789ab" && entries.first?.source == "192.0.2.1")
        #expect(entries.first?.at == t0)

        // Revoking again is audited again, and the device keeps the time it was first revoked.
        let later = t0.addingTimeInterval(60)
        #expect(try await store.revokeDevice(id: "dev_a", at: later, by: "certificate sha256/x", source: nil))
        device = try #require(try await store.device(id: "dev_a"))
        #expect(device.revokedAt == t0)
        entries = try await store.auditRecords(before: nil, limit: 10)
        #expect(entries.map(\.actor) == ["certificate sha256/x", "admin-token 0123456789ab"] && entries[0].at == later)
        #expect(entries[0].source == nil)
        // The plain revocation keeps the first time too.
        #expect(try await store.revokeDevice(id: "dev_a", at: later.addingTimeInterval(60)))
        #expect(try await store.device(id: "dev_a")?.revokedAt == t0)
    }

    @Test(arguments: kinds)
    func devicesPageNewestFirstAndASearchMatchesAnyOfTheirIDs(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        _ = try await store.putAccount(
            AccountRecord(name: "alice", realm: "signet", basicHash: nil, digests: [:], createdAt: t0, updatedAt: t0)
        )
        for index in 0..<7 {
            var device = try StoreConformanceTests.device("dev_\(index)")
            // Two devices share a creation time: the id breaks the tie.
            device.createdAt = t0.addingTimeInterval(Double(min(index, 5)))
            device.user = index.isMultiple(of: 2) ? "alice" : nil
            try await store.registerDevice(device)
        }
        var seen: [String] = []
        var cursor: DeviceListing.Cursor?
        repeat {
            let page = try await store.listDevices(DeviceListing(after: cursor, limit: 3))
            seen += page.map(\.deviceID)
            cursor = page.count == 3 ? page.last.map { DeviceListing.Cursor(createdAt: $0.createdAt, deviceID: $0.deviceID) } : nil
        } while cursor != nil
        #expect(seen == ["dev_6", "dev_5", "dev_4", "dev_3", "dev_2", "dev_1", "dev_0"])

        // Last seen moves forward only, whichever instance's batch lands last; unknown devices are skipped.
        try await store.recordActivity(
            counts: [],
            refusals: [],
            lastSeen: ["dev_1": t0.addingTimeInterval(100), "dev_2": t0.addingTimeInterval(50), "gone": t0]
        )
        try await store.recordActivity(counts: [], refusals: [], lastSeen: ["dev_1": t0.addingTimeInterval(70)])
        #expect(try await store.device(id: "dev_1")?.lastSeenAt == t0.addingTimeInterval(100))
        #expect(try await store.device(keyID: "key-dev_2")?.lastSeenAt == t0.addingTimeInterval(50))
        #expect(try await store.listDevices(DeviceListing(search: "dev_2")).first?.lastSeenAt == t0.addingTimeInterval(50))
        #expect(try await store.device(id: "dev_3")?.lastSeenAt == nil)
        let cursorText = DeviceListing.Cursor(createdAt: t0.addingTimeInterval(5), deviceID: "dev_6").text
        #expect(DeviceListing.Cursor(text: cursorText)?.deviceID == "dev_6")

        #expect(try await store.listDevices(DeviceListing(search: "dev_3")).map(\.deviceID) == ["dev_3"])
        #expect(try await store.listDevices(DeviceListing(search: "key-dev_4")).map(\.deviceID) == ["dev_4"])
        #expect(
            try await store.listDevices(DeviceListing(search: "alice")).map(\.deviceID)
                == ["dev_6", "dev_4", "dev_2", "dev_0"]
        )
        let afterFour = DeviceListing.Cursor(createdAt: t0.addingTimeInterval(4), deviceID: "dev_4")
        #expect(
            try await store.listDevices(DeviceListing(search: "alice", after: afterFour, limit: 1)).map(\.deviceID)
                == ["dev_2"]
        )
        #expect(try await store.listDevices(DeviceListing(search: "nobody")).isEmpty)
        // Search text is data, never SQL.
        #expect(try await store.listDevices(DeviceListing(search: "' OR 1=1 --")).isEmpty)
    }

    @Test(arguments: kinds)
    func pinReportsAreFoundByIDAndCountedByHost(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        for (index, (id, host)) in [("r0", "api.example"), ("r1", "api.example"), ("r1", "api.example"), ("r2", "cdn.example")].enumerated() {
            let seen = t0.addingTimeInterval(Double(index))
            try await store.recordPinReport(
                PinReportRecord(
                    id: id,
                    hostname: host,
                    reason: "no-matching-pin",
                    servedPins: "sha256/a",
                    firstSeen: seen,
                    lastSeen: seen,
                    source: nil,
                    json: "{\"hostname\":\"\(host)\"}"
                ),
                limit: 100
            )
        }
        #expect(try await store.pinReport(id: "r2")?.hostname == "cdn.example")
        #expect(try await store.pinReport(id: "r9") == nil)
        // Counted by host over its groups' counts.
        #expect(
            try await store.pinReportHosts(limit: 10) == [
                PinReportHostCount(hostname: "api.example", count: 3),
                PinReportHostCount(hostname: "cdn.example", count: 1),
            ]
        )
        #expect(try await store.pinReportHosts(limit: 1).count == 1)
        #expect(try await store.pinReportGroupCount() == 3)
    }
}
