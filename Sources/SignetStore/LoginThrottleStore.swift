// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Failed logins in the current window of one subject (`user:…` or `source:…`).
public struct LoginFailures: Sendable, Hashable {
    public var count: Int
    /// When the window the failures belong to closes.
    public var windowEnd: Date

    public init(count: Int, windowEnd: Date) {
        self.count = count
        self.windowEnd = windowEnd
    }
}

/// Counts failed logins per subject, in the store so that every gateway instance sees the same
/// lockout. A window opens with a subject's first failure and lasts `window` seconds.
///
/// The same windows hold the per-source limits every instance shares (`limit:<name>:<source>`,
/// SignetMiddleware's `SharedSourceLimiter`): a count per subject and window is all either needs.
public protocol LoginThrottleStore: Sendable {
    /// Counts one failure of `subject`, atomically, and returns the window's count.
    func recordLoginFailure(subject: String, window: TimeInterval, now: Date) async throws -> LoginFailures

    /// The open windows of `subjects` (absent: no failure in an open window).
    func loginFailures(subjects: [String], now: Date) async throws -> [String: LoginFailures]

    /// Forgets `subject`'s failures (after a successful login).
    func clearLoginFailures(subject: String) async throws
}
