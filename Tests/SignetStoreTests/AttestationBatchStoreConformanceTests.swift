// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore
import SignetTestSupport
import Testing

/// The leaked-keybox count, the same against every store: a sliding window per batch, each device
/// counted once, batches apart, old records swept after the retention.
@Suite(.awaitsCleanups) struct AttestationBatchStoreConformanceTests {
    typealias Kind = StoreConformanceTests.Kind
    static let kinds = StoreConformanceTests.kinds
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    @Test(arguments: kinds)
    func countsDevicesPerBatchInASlidingWindow(_ kind: Kind) async throws {
        let store = try await StoreConformanceTests.makeStore(kind)
        Cleanup.after { try await store.shutdown() }
        let batch = "batch-\(UUID().uuidString)"
        let other = "batch-\(UUID().uuidString)"
        #expect(try await store.recordAttestation(batch: batch, deviceID: "d1", now: t0, window: 100) == 1)
        #expect(try await store.recordAttestation(batch: batch, deviceID: "d2", now: t0.addingTimeInterval(50), window: 100) == 2)
        // The same device again counts once.
        #expect(try await store.recordAttestation(batch: batch, deviceID: "d2", now: t0.addingTimeInterval(60), window: 100) == 2)
        #expect(try await store.recordAttestation(batch: other, deviceID: "d3", now: t0.addingTimeInterval(60), window: 100) == 1)
        // d1 slides out of the window.
        #expect(try await store.recordAttestation(batch: batch, deviceID: "d4", now: t0.addingTimeInterval(120), window: 100) == 2)
        // Past the retention, the sweep removes them: a device recorded again counts alone.
        _ = try await store.sweep(now: t0.addingTimeInterval(AttestationBatchRetention.seconds + 200))
        let later = t0.addingTimeInterval(AttestationBatchRetention.seconds + 300)
        #expect(try await store.recordAttestation(batch: batch, deviceID: "d1", now: later, window: AttestationBatchRetention.seconds) == 1)
    }
}
