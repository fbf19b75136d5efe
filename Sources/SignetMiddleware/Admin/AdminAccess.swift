// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// Who may use the admin surfaces — the admin API's bearer token and the operator console's sign-in —
/// and one count of failed attempts per source that every one of them shares.
///
/// A source past `maximumFailuresPerMinute` failed attempts is refused with `rate_limited`
/// (and `Retry-After`) before its credential is looked at, even a right one: otherwise the one right
/// answer would stand out among the refusals. The console locks the API and the API the console,
/// and with a shared store every instance locks every other (``SharedSourceLimiter``).
public final class AdminAccess: Sendable {
    public let token: AdminToken
    private let failures: SharedSourceLimiter
    private static let refusal = "too many failed admin credentials from this source"

    /// - Parameters:
    ///   - token: The admin token; `nil` turns the admin API off.
    ///   - store: Where failed attempts are counted for every instance; `nil`, this process alone.
    ///   - maximumFailuresPerMinute: Failed attempts a source may make in a minute.
    public init(token: String?, store: (any LoginThrottleStore)? = nil, maximumFailuresPerMinute: Int = 10) {
        self.token = AdminToken(token)
        self.failures = SharedSourceLimiter("admin-failures", limit: maximumFailuresPerMinute, store: store)
    }

    /// Runs `check` (a credential comparison) unless `source` has used up its failed attempts, and
    /// counts a failure when it returns `false`, in one step.
    ///
    /// - Throws: `rate_limited` for a source past its failures (`check` did not run).
    public func attempt(from source: String?, now: Date, check: () -> Bool) async throws -> Bool {
        try await failures.attempt(source, now: now, refusing: Self.refusal, check: check)
    }

    /// Throws `rate_limited` when `source` has used up its failed attempts.
    public func checkAttempts(from source: String?, now: Date) async throws {
        try await failures.check(source, now: now, refusing: Self.refusal)
    }

    /// Counts a failed attempt from `source`.
    public func recordFailure(from source: String?, now: Date) async {
        await failures.record(source, now: now)
    }

    /// The admin API's check: `not_found` when there is no token, `rate_limited` for a source past
    /// its failures, `admin_unauthorized` without the right `Authorization: Bearer` (counted).
    public func authorize(_ request: Request, source: String?, now: Date) async throws {
        guard token.token != nil else { throw SignetError(.notFound, "the admin API is not enabled") }
        // RFC 6750 §2.1, with the scheme's name case-insensitive (RFC 9110 §11.1).
        let presented = request.headers[.authorization] ?? ""
        let matched = try await attempt(from: source, now: now) {
            presented.prefix(7).lowercased() == "bearer " && token.matches(String(presented.dropFirst(7)))
        }
        guard matched else { throw SignetError(.adminUnauthorized, "the admin token is missing or wrong") }
    }
}
