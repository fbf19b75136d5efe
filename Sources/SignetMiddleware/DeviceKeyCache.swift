// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Synchronization

/// Remembers resolved device keys for a few seconds so a busy device does not cost a store read per
/// request, and key ids that resolve to nothing for a moment, so a client naming unknown keys costs
/// a store read per ``missLifetime``, not per request. A revocation through this instance drops
/// every entry at once, a registration through it the key's miss; through another instance either
/// takes effect within the lifetime.
public final class DeviceKeyCache: KeyResolver {
    private let base: any KeyResolver
    private let lifetime: Duration
    /// How long a key id that resolved to nothing stays unresolved here.
    public let missLifetime: Duration
    private let capacity: Int
    private let entries = Mutex<[String: (records: [KeyRecord], until: ContinuousClock.Instant)]>([:])

    public init(
        _ base: any KeyResolver,
        lifetime: Duration = .seconds(2),
        missLifetime: Duration = .seconds(1),
        capacity: Int = 100_000
    ) {
        self.base = base
        self.lifetime = lifetime
        self.missLifetime = min(missLifetime, lifetime)
        self.capacity = capacity
    }

    public func records(for keyID: String) async throws -> [KeyRecord] {
        let now = ContinuousClock.now
        if let cached = entries.withLock({ $0[keyID] }), cached.until > now { return cached.records }
        let records = try await base.records(for: keyID)
        let keep = records.isEmpty ? missLifetime : lifetime
        guard keep > .zero else { return records }
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[keyID] = (records, now + keep)
        }
        return records
    }

    /// Forgets one key id (a device registered under it through this instance).
    public func forget(_ keyID: String) {
        _ = entries.withLock { $0.removeValue(forKey: keyID) }
    }

    /// Forgets every cached key (after a revocation).
    public func invalidateAll() {
        entries.withLock { $0.removeAll() }
    }
}
