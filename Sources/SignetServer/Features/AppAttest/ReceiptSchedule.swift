// SPDX-License-Identifier: Apache-2.0
import Foundation

/// When the refresher exchanges a receipt next, and how it backs off from failures.
public struct ReceiptSchedule: Sendable, Hashable {
    /// Exchange this long before the receipt expires (Apple stops exchanging expired receipts).
    public var beforeExpiry: TimeInterval
    /// The first retry after a failure; doubled per failure up to `maximumBackoff`.
    public var initialBackoff: TimeInterval
    public var maximumBackoff: TimeInterval
    /// How long one instance holds a due receipt while it exchanges it.
    public var lease: TimeInterval

    public init(
        beforeExpiry: TimeInterval = 30 * 86_400,
        initialBackoff: TimeInterval = 60,
        maximumBackoff: TimeInterval = 86_400,
        lease: TimeInterval = 300
    ) {
        self.beforeExpiry = beforeExpiry
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.lease = lease
    }

    /// After a successful exchange: `beforeExpiry` ahead of the expiry, never before Apple's "not
    /// before" (an earlier request only gets `304`), never in the past.
    public func next(expiresAt: Date, notBefore: Date?, now: Date) -> Date {
        var at = expiresAt.addingTimeInterval(-beforeExpiry)
        if let notBefore, at < notBefore { at = notBefore }
        return max(at, now)
    }

    /// After the `failures`-th failure in a row: exponential, capped, at least what the server asked.
    public func retry(after failures: Int, retryAfter: TimeInterval?, now: Date) -> Date {
        let exponent = Double(max(0, min(failures, 30)))
        let backoff = min(maximumBackoff, initialBackoff * pow(2, exponent))
        return now.addingTimeInterval(max(backoff, min(retryAfter ?? 0, maximumBackoff)))
    }
}
