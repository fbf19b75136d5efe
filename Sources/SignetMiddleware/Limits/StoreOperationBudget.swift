// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// How many store operations a limit may spend per second in this process: a token bucket of one
/// second's worth. A flood from many sources (a botnet, the /64s of a few IPv6 prefixes) would
/// otherwise cost the store a write per request for every source's first `limit` requests; past
/// the budget the process's own count decides, as it does while the store is away, and the limit
/// holds per instance instead of across them.
final class StoreOperationBudget: Sendable {
    private struct Bucket {
        var tokens: Double
        var refilled: Date?
    }

    let perSecond: Int
    private let bucket: Mutex<Bucket>

    init(perSecond: Int) {
        self.perSecond = perSecond
        bucket = Mutex(Bucket(tokens: Double(perSecond), refilled: nil))
    }

    /// Takes one operation's token; `false` when the second's budget is spent.
    func take(now: Date) -> Bool {
        bucket.withLock { bucket in
            if let refilled = bucket.refilled {
                let elapsed = max(0, now.timeIntervalSince(refilled))
                bucket.tokens = min(Double(perSecond), bucket.tokens + elapsed * Double(perSecond))
                // Callers' clocks read a moment apart: an earlier one refills nothing twice.
                bucket.refilled = max(refilled, now)
            } else {
                bucket.refilled = now
            }
            guard bucket.tokens >= 1 else { return false }
            bucket.tokens -= 1
            return true
        }
    }
}
