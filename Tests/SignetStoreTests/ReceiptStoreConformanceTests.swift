// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore
import SignetTestSupport
import Testing

/// App Attest receipts and the refresher's schedule, unchanged against every store.
@Suite(.awaitsCleanups) struct ReceiptStoreConformanceTests {
    typealias Kind = StoreConformanceTests.Kind
    static let kinds = StoreConformanceTests.kinds
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    func record(_ device: String, created: Date, risk: Int? = nil, refresh: Date) -> ReceiptRecord {
        ReceiptRecord(
            deviceID: device,
            receipt: Array("receipt of \(device) at \(created.timeIntervalSince1970)".utf8),
            kind: risk == nil ? "ATTEST" : "RECEIPT",
            createdAt: created,
            notBefore: risk == nil ? nil : created.addingTimeInterval(86_400),
            expiresAt: created.addingTimeInterval(90 * 86_400),
            riskMetric: risk,
            refreshAt: refresh
        )
    }

    @Test(arguments: kinds)
    func aReceiptIsSavedReplacedOnlyByANewerOneAndSetsTheDevicesRiskMetric(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let device = try StoreConformanceTests.device("dev_r1")
        try await store.registerDevice(device)
        let attest = record("dev_r1", created: t0, refresh: t0)
        try await store.saveReceipt(attest)
        #expect(try await store.receipt(deviceID: "dev_r1") == attest)
        #expect(try await store.device(id: "dev_r1")?.riskMetric == nil)

        let exchanged = record("dev_r1", created: t0.addingTimeInterval(60), risk: 4, refresh: t0.addingTimeInterval(86_400))
        try await store.saveReceipt(exchanged)
        #expect(try await store.receipt(deviceID: "dev_r1") == exchanged)
        #expect(try await store.device(id: "dev_r1")?.riskMetric == 4)
        #expect(try await store.device(keyID: device.keyID)?.riskMetric == 4)

        // An older receipt (another instance's slower exchange) changes nothing.
        try await store.saveReceipt(record("dev_r1", created: t0.addingTimeInterval(30), risk: 1, refresh: t0))
        #expect(try await store.receipt(deviceID: "dev_r1") == exchanged)
        #expect(try await store.device(id: "dev_r1")?.riskMetric == 4)
        #expect(try await store.receipt(deviceID: "nobody") == nil)
    }

    @Test(arguments: kinds)
    func dueReceiptsOfActiveDevicesAreClaimedOnceAndFailuresBackOff(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        for (index, id) in ["dev_a", "dev_b", "dev_c", "dev_d"].enumerated() {
            try await store.registerDevice(try StoreConformanceTests.device(id))
            try await store.saveReceipt(record(id, created: t0, refresh: t0.addingTimeInterval(Double(index) * 10)))
        }
        _ = try await store.revokeDevice(id: "dev_b", at: t0)
        let due = try await store.receiptsDue(at: t0.addingTimeInterval(25), limit: 10)
        #expect(due.map(\.deviceID) == ["dev_a", "dev_c"])
        #expect(try await store.receiptsDue(at: t0.addingTimeInterval(25), limit: 1).map(\.deviceID) == ["dev_a"])

        // Two instances race for the same due receipt: exactly one takes it.
        let lease = t0.addingTimeInterval(300)
        let claims = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask { try await store.claimReceiptRefresh(deviceID: "dev_a", dueAt: self.t0, leaseUntil: lease) }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(claims == 1)
        #expect(try await store.receiptsDue(at: t0.addingTimeInterval(25), limit: 10).map(\.deviceID) == ["dev_c"])

        try await store.recordReceiptFailure(
            deviceID: "dev_a", error: "HTTP 503", retryAt: t0.addingTimeInterval(600), leasedUntil: lease
        )
        // A failure under a lease that no longer holds (another instance took over) changes nothing.
        try await store.recordReceiptFailure(
            deviceID: "dev_a", error: "late", retryAt: t0.addingTimeInterval(30), leasedUntil: lease
        )
        try await store.recordReceiptFailure(
            deviceID: "dev_a", error: "HTTP 429", retryAt: t0.addingTimeInterval(1_200), leasedUntil: t0.addingTimeInterval(600)
        )
        let failed = try #require(try await store.receipt(deviceID: "dev_a"))
        #expect(failed.failures == 2 && failed.lastError == "HTTP 429")
        #expect(failed.refreshAt == t0.addingTimeInterval(1_200))

        // Receipts that failed wait behind those that never did; expired receipts are not due.
        let later = t0.addingTimeInterval(2_000)
        #expect(try await store.receiptsDue(at: later, limit: 10).map(\.deviceID) == ["dev_c", "dev_d", "dev_a"])
        #expect(try await store.receiptsDue(at: t0.addingTimeInterval(91 * 86_400), limit: 10).isEmpty)
    }
}
