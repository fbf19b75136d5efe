// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetStore
import Synchronization

/// Who a login attempt counts against, and whether it may be made.
///
/// Failures are counted per user and per source address, in the store (so every instance sees one
/// lockout) and, ahead of the store, in this instance's memory: the check and the count of a failure
/// happen in one critical section with the verification, so a burst of parallel guesses cannot
/// all pass the check before any failure is written.
///
/// A user is counted under fixed-length subjects made from `H(name:realm)` — the Digest userhash —
/// for each algorithm, so a name and its userhash count alike, whether or not the user exists, and a
/// long name cannot make a long key.
final class LoginLimits: Sendable {
    /// The subjects of one attempt.
    struct Subjects: Sendable {
        var user: [String]
        var source: String
        var all: [String] { user + [source] }
    }

    /// What the store held for the subjects when the attempt began.
    struct Snapshot: Sendable {
        var stored: [String: LoginFailures]
    }

    private struct Table {
        var entries: [String: LoginFailures] = [:]
        var lastSweep = Date.distantPast
    }

    private let recent = Mutex(Table())
    let store: any LoginThrottleStore
    let maxFailures: Int
    let maxFailuresPerSource: Int
    let window: TimeInterval
    let realm: String
    let algorithms: [DigestAlgorithm]
    /// Subjects remembered in memory at most; past it only the store counts new ones.
    let capacity: Int

    init(configuration: PasswordLoginConfiguration, store: any LoginThrottleStore, capacity: Int = 100_000) {
        self.store = store
        self.maxFailures = configuration.maxFailures
        self.maxFailuresPerSource = configuration.maxFailuresPerSource
        self.window = TimeInterval(configuration.lockoutSeconds)
        self.realm = configuration.realm
        // SHA-256 always, so Basic-only configurations have a subject too.
        self.algorithms = Array(Set(configuration.digestAlgorithms + [.sha256])).sorted()
        self.capacity = capacity
    }

    // MARK: Subjects

    /// The subject of a userhash sent with `algorithm`.
    static func subject(_ algorithm: DigestAlgorithm, userhash: String) -> String {
        "user:" + Hex.encode(SHA256.hash(data: Array((algorithm.rawValue + ":" + userhash.lowercased()).utf8)))
    }

    /// The subjects of a user name: its userhash under each algorithm.
    func subjects(name: String) -> [String] {
        algorithms.map { Self.subject($0, userhash: DigestResponse.userhash(username: name, realm: realm, algorithm: $0)) }
    }

    func subjects(user: [String], source: String?) -> Subjects {
        Subjects(user: user, source: "source:" + IPAddress.sourceKey(source))
    }

    // MARK: Attempts

    /// Reads the store's windows of the subjects.
    func read(_ subjects: Subjects, now: Date) async throws -> Snapshot {
        Snapshot(stored: try await store.loginFailures(subjects: subjects.all, now: now))
    }

    /// Throws `login_locked` when a subject is at its limit, by the store or by this instance's memory.
    func check(_ subjects: Subjects, _ snapshot: Snapshot, now: Date) throws {
        try recent.withLock { try check(subjects, snapshot, table: $0, now: now) }
    }

    /// Checks, verifies and counts a failure in memory as one step (for verifications that take
    /// microseconds); returns what `verify` returned.
    func attempt(_ subjects: Subjects, _ snapshot: Snapshot, now: Date, verify: () -> Bool) throws -> Bool {
        try recent.withLock { table in
            try check(subjects, snapshot, table: table, now: now)
            let verified = verify()
            if !verified { record(subjects, in: &table, now: now) }
            return verified
        }
    }

    /// Counts a failure in memory (the store follows with ``persistFailure(_:now:)``).
    func noteFailure(_ subjects: Subjects, now: Date) {
        recent.withLock { record(subjects, in: &$0, now: now) }
    }

    /// Counts a failure in the store: the source first, so a refused user write still leaves it.
    func persistFailure(_ subjects: Subjects, now: Date) async throws {
        _ = try await store.recordLoginFailure(subject: subjects.source, window: window, now: now)
        for subject in subjects.user {
            _ = try await store.recordLoginFailure(subject: subject, window: window, now: now)
        }
    }

    /// A login succeeded: the user's failures are forgotten (in the store only where it had some,
    /// so a success costs no write otherwise).
    func succeeded(name: String, _ snapshot: Snapshot) async throws {
        let subjects = subjects(name: name)
        recent.withLock { table in
            for subject in subjects { table.entries[subject] = nil }
        }
        for subject in subjects where snapshot.stored[subject] != nil {
            try await store.clearLoginFailures(subject: subject)
        }
    }

    // MARK: Table

    private func check(_ subjects: Subjects, _ snapshot: Snapshot, table: Table, now: Date) throws {
        for subject in subjects.all {
            let limit = subject == subjects.source ? maxFailuresPerSource : maxFailures
            let windows = [snapshot.stored[subject], table.entries[subject]].compactMap { $0 }.filter { $0.windowEnd > now }
            guard let worst = windows.max(by: { $0.count < $1.count }), worst.count >= limit else { continue }
            var error = SignetError(.loginLocked, "too many failed logins; try again later")
            error.retryAfterSeconds = Int(windows.map(\.windowEnd).max()!.timeIntervalSince(now).rounded(.up))
            throw error
        }
    }

    private func record(_ subjects: Subjects, in table: inout Table, now: Date) {
        if table.entries.count >= capacity, now.timeIntervalSince(table.lastSweep) >= 1 {
            table.entries = table.entries.filter { $0.value.windowEnd > now }
            table.lastSweep = now
        }
        for subject in subjects.all {
            var failures = table.entries[subject] ?? LoginFailures(count: 0, windowEnd: now)
            if failures.windowEnd <= now { failures = LoginFailures(count: 0, windowEnd: now.addingTimeInterval(window)) }
            failures.count += 1
            guard table.entries[subject] != nil || table.entries.count < capacity else { continue }
            table.entries[subject] = failures
        }
    }
}
