// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetAndroid
import SignetCore
import Synchronization

/// Google's Android attestation revocation list as last fetched: the last good copy is kept when a
/// fetch fails, and past `maximumAge` without a good one registrations are refused
/// (`attestation_status_unavailable`) rather than trusting a list that may miss a revoked batch.
final class AttestationStatusCache: Sendable {
    private struct State {
        var list: AttestationStatusList?
        var fetchedAt: Date?
        var lastError: String?
    }

    private let state = Mutex(State())
    /// `nil`: the list never goes stale (read from a file the operator keeps).
    let maximumAge: TimeInterval?
    let clock: @Sendable () -> Date

    init(maximumAge: TimeInterval?, clock: @escaping @Sendable () -> Date) {
        self.maximumAge = maximumAge
        self.clock = clock
    }

    /// The list in force, or the refusal.
    func current() throws -> AttestationStatusList {
        let (list, fetchedAt, lastError) = state.withLock { ($0.list, $0.fetchedAt, $0.lastError) }
        guard let list, let fetchedAt else {
            throw SignetError(
                .attestationStatusUnavailable,
                "Google's attestation revocation list has not been fetched yet\(lastError.map { " (\($0))" } ?? "")"
            )
        }
        if let maximumAge, clock().timeIntervalSince(fetchedAt) > maximumAge {
            throw SignetError(
                .attestationStatusUnavailable,
                "Google's attestation revocation list is \(Int(clock().timeIntervalSince(fetchedAt))) s old, more than the \(Int(maximumAge)) s allowed"
            )
        }
        return list
    }

    func store(_ list: AttestationStatusList) {
        state.withLock {
            $0.list = list
            $0.fetchedAt = clock()
            $0.lastError = nil
        }
    }

    /// A failed fetch: the last good copy stays.
    func failed(_ error: String) {
        state.withLock { $0.lastError = error }
    }

    var fetchedAt: Date? { state.withLock { $0.fetchedAt } }
    var entryCount: Int { state.withLock { $0.list?.entries.count ?? 0 } }
}
