// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Synchronization

/// Remembers resolved device keys for a few seconds so a busy device does not cost a store read per
/// request. Only found keys are kept; a revocation through this instance drops its entry at once, one
/// through another instance takes effect within `lifetime`.
public final class DeviceKeyCache: KeyResolver {
    private let base: any KeyResolver
    private let lifetime: Duration
    private let capacity: Int
    private let entries = Mutex<[String: (records: [KeyRecord], until: ContinuousClock.Instant)]>([:])

    public init(_ base: any KeyResolver, lifetime: Duration = .seconds(2), capacity: Int = 100_000) {
        self.base = base
        self.lifetime = lifetime
        self.capacity = capacity
    }

    public func records(for keyID: String) async throws -> [KeyRecord] {
        let now = ContinuousClock.now
        if let cached = entries.withLock({ $0[keyID] }), cached.until > now { return cached.records }
        let records = try await base.records(for: keyID)
        guard !records.isEmpty, lifetime > .zero else { return records }
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[keyID] = (records, now + lifetime)
        }
        return records
    }

    /// Forgets every cached key (after a revocation).
    public func invalidateAll() {
        entries.withLock { $0.removeAll() }
    }
}
