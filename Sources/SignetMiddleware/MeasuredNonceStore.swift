// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// A nonce store whose claims are timed and counted (``SignetMetrics/recordStore(_:duration:failed:)``,
/// ``SignetMetrics/recordNonceClaim(fresh:)``): every verified request claims one, so a slow or
/// failing store shows here first.
public struct MeasuredNonceStore: NonceStore {
    public let inner: any NonceStore
    public let metrics: SignetMetrics

    public init(_ inner: any NonceStore, metrics: SignetMetrics) {
        self.inner = inner
        self.metrics = metrics
    }

    nonisolated(nonsending) public func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool {
        let started = ContinuousClock.now
        do {
            let fresh = try await inner.claim(keyID: keyID, nonce: nonce, until: expiry, now: now)
            metrics.recordNonceClaim(fresh: fresh, duration: ContinuousClock.now - started)
            return fresh
        } catch {
            metrics.recordStore("nonce_claim", duration: ContinuousClock.now - started, failed: true)
            throw error
        }
    }
}
