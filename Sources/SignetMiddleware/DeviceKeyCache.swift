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
    /// Misses apart from keys, and fewer: key ids that name nothing cost a client nothing to invent,
    /// and must not push real devices' keys out.
    private let missCapacity: Int
    private let cache = Mutex(Entries())

    private struct Entries {
        var found: [String: (records: [KeyRecord], until: ContinuousClock.Instant)] = [:]
        var missing: [String: ContinuousClock.Instant] = [:]
    }

    public init(
        _ base: any KeyResolver,
        lifetime: Duration = .seconds(2),
        missLifetime: Duration = .seconds(1),
        capacity: Int = 100_000,
        missCapacity: Int = 10_000
    ) {
        self.base = base
        self.lifetime = lifetime
        self.missLifetime = min(missLifetime, lifetime)
        self.capacity = capacity
        self.missCapacity = missCapacity
    }

    nonisolated(nonsending) public func records(for keyID: String) async throws -> [KeyRecord] {
        let now = ContinuousClock.now
        let cached: [KeyRecord]? = cache.withLock { cache in
            if let found = cache.found[keyID], found.until > now { return found.records }
            if let missing = cache.missing[keyID], missing > now { return [] }
            return nil
        }
        if let cached { return cached }
        let records = try await base.records(for: keyID)
        cache.withLock { cache in
            if records.isEmpty {
                guard missLifetime > .zero else { return }
                if cache.missing.count >= missCapacity { cache.missing.removeAll(keepingCapacity: true) }
                cache.missing[keyID] = now + missLifetime
            } else {
                guard lifetime > .zero else { return }
                if cache.found.count >= capacity { cache.found.removeAll(keepingCapacity: true) }
                cache.found[keyID] = (records, now + lifetime)
            }
        }
        return records
    }

    /// Forgets one key id (a device registered under it through this instance).
    public func forget(_ keyID: String) {
        cache.withLock { cache in
            cache.found[keyID] = nil
            cache.missing[keyID] = nil
        }
    }

    /// Forgets every cached key (after a revocation).
    public func invalidateAll() {
        cache.withLock { $0 = Entries() }
    }
}
