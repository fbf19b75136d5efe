// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// One-time server challenges (DESIGN.md lifecycle step 1).
public protocol ChallengeStore: Sendable {
    /// Stores a new challenge, unless `limit` unexpired ones are outstanding (`rate_limited`), so an
    /// unauthenticated flood cannot grow the store without bound.
    func issueChallenge(_ value: String, expiresAt: Date, now: Date, limit: Int) async throws

    /// Consumes a challenge exactly once: of concurrent calls with one value, one succeeds.
    ///
    /// - Throws: `challenge_unknown` (never issued, or already used) or `challenge_expired`.
    func consumeChallenge(_ value: String, now: Date) async throws
}
