// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetStore
import Synchronization

/// Request outcomes and refusals held in memory until the next flush into an `ActivityStore`
/// (the gateway flushes every second), so a request never waits on the console's writes.
///
/// Bounded both ways: counts are one number per minute, outcome and reason; at most
/// `maximumPendingRefusals` refusals wait between flushes, and past that they are only counted (a flood
/// of refusals is visible in the charts without each one costing a row).
public final class ActivityRecorder: Sendable {
    private struct Key: Hashable {
        var minute: Int64
        var outcome: String
        var reason: String
    }

    private struct Pending {
        var counts: [Key: Int] = [:]
        var refusals: [RefusalRecord] = []
        var lastSeen: [String: Date] = [:]
        /// Refusals counted but not kept since the last flush.
        var dropped = 0
    }

    private let pending = Mutex(Pending())
    /// The last flush begun: each waits for the one before it, so a flush that returns has seen
    /// every earlier one written (the periodic flush and an operator's, or a test's, never race).
    private let lastFlush = Mutex<Task<Int, any Error>?>(nil)
    private let maximumPendingRefusals: Int
    private let maximumPendingDevices = 100_000
    private let clock: @Sendable () -> Date
    /// The instance each refusal is recorded as refused by.
    public let instance: String?

    public init(
        instance: String? = nil,
        maximumPendingRefusals: Int = 1_000,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.instance = instance
        self.maximumPendingRefusals = maximumPendingRefusals
        self.clock = clock
    }

    /// Counts one request in the current minute.
    public func count(outcome: String, reason: String?) {
        let key = Key(minute: ActivityCount.minute(of: clock()), outcome: outcome, reason: reason ?? "")
        pending.withLock { $0.counts[key, default: 0] += 1 }
    }

    /// Counts one accepted request and notes its device as seen now (one lock, one clock read: every
    /// verified request comes here); at most `maximumPendingDevices` devices wait between flushes.
    public func accepted(deviceID: String?) {
        let now = clock()
        let key = Key(minute: ActivityCount.minute(of: now), outcome: "accepted", reason: "")
        pending.withLock { pending in
            pending.counts[key, default: 0] += 1
            guard let deviceID,
                pending.lastSeen.count < maximumPendingDevices || pending.lastSeen[deviceID] != nil
            else { return }
            pending.lastSeen[deviceID] = now
        }
    }

    /// Keeps one refusal for the refusals page (it is counted separately, through ``count(outcome:reason:)``).
    /// `monitored`: a `monitor` route forwarded the request, and this is the refusal enforcing
    /// would have made.
    public func refused(
        reason: String,
        status: Int,
        method: String,
        path: String,
        keyID: String?,
        source: String?,
        monitored: Bool = false
    ) {
        let refusal = RefusalRecord(
            at: clock(),
            reason: reason,
            status: status,
            method: method,
            path: path,
            keyID: keyID,
            source: source,
            instance: instance,
            monitored: monitored
        )
        pending.withLock { pending in
            guard pending.refusals.count < maximumPendingRefusals else {
                pending.dropped += 1
                return
            }
            pending.refusals.append(refusal)
        }
    }

    /// Writes what is pending, after any flush begun before it; on failure it is kept for the next
    /// flush (within the same bounds). Returns how many refusals were dropped since the last flush.
    @discardableResult
    public func flush(to store: any ActivityStore) async throws -> Int {
        let flush = lastFlush.withLock { last in
            let previous = last
            let next = Task {
                _ = await previous?.result
                return try await self.write(to: store)
            }
            last = next
            return next
        }
        return try await flush.value
    }

    private func write(to store: any ActivityStore) async throws -> Int {
        let taken = pending.withLock { pending in
            defer { pending = Pending() }
            return pending
        }
        guard !taken.counts.isEmpty || !taken.refusals.isEmpty || !taken.lastSeen.isEmpty else { return taken.dropped }
        do {
            try await store.recordActivity(
                counts: taken.counts.map {
                    ActivityCount(minute: $0.key.minute, outcome: $0.key.outcome, reason: $0.key.reason, count: $0.value)
                },
                refusals: taken.refusals,
                lastSeen: taken.lastSeen
            )
        } catch {
            pending.withLock { pending in
                for (key, value) in taken.counts { pending.counts[key, default: 0] += value }
                pending.lastSeen.merge(taken.lastSeen) { max($0, $1) }
                let room = max(0, maximumPendingRefusals - pending.refusals.count)
                pending.refusals.insert(contentsOf: taken.refusals.prefix(room), at: 0)
                pending.dropped += taken.dropped + max(0, taken.refusals.count - room)
            }
            throw error
        }
        return taken.dropped
    }

    /// The key id a refused request named in `Signature-Input` (`keyid="…"`), read without parsing
    /// the whole field: the console shows it, nothing trusts it.
    public static func claimedKeyID(signatureInput: String?) -> String? {
        guard let field = signatureInput?.utf8.prefix(4096) else { return nil }
        let text = String(Substring(field))
        guard let range = text.range(of: "keyid=\"") else { return nil }
        let rest = text[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        let keyID = rest[..<end]
        return keyID.isEmpty ? nil : String(keyID.prefix(RefusalRecord.maximumKeyIDLength))
    }
}
