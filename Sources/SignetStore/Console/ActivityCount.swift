// SPDX-License-Identifier: Apache-2.0
import Foundation

/// How many requests ended one way in one minute: the console's charts are drawn from these.
public struct ActivityCount: Sendable, Hashable {
    /// Minutes since 1970 (UTC).
    public var minute: Int64
    /// `accepted`, `rejected`, `open`, `registered`, …, as the middleware's `SignetMetrics` names outcomes.
    public var outcome: String
    /// The reason code of a refusal; empty otherwise.
    public var reason: String
    public var count: Int

    public init(minute: Int64, outcome: String, reason: String = "", count: Int) {
        self.minute = minute
        self.outcome = outcome
        self.reason = reason
        self.count = count
    }

    /// The minute a time falls in.
    public static func minute(of date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / 60).rounded(.down))
    }

    /// How long minute counts are kept (the console shows the last day).
    public static let retention: TimeInterval = 2 * 86_400
}
