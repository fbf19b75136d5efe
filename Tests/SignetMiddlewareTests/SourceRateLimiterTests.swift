// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

import SignetMiddleware

@Suite struct SourceRateLimiterTests {
    /// A burst that straddles a minute boundary is still one window.
    @Test func theWindowOpensAtTheSourcesFirstRequest() {
        let limiter = SourceRateLimiter(limit: 3)
        let boundary = Date(timeIntervalSince1970: 1_800_000_000 - 1_800_000_000.truncatingRemainder(dividingBy: 60))
        let start = boundary.addingTimeInterval(-1)
        let answers = (0..<4).map { limiter.allow("10.0.0.1", now: start.addingTimeInterval(Double($0) * 0.5)) }
        #expect(answers == [true, true, true, false])
        #expect(limiter.allow("10.0.0.2", now: start.addingTimeInterval(2)), "another source has its own count")
        #expect(limiter.allow("10.0.0.1", now: start.addingTimeInterval(60)), "a new window after 60 s")
    }

    @Test func sourcesBeyondTheCapShareOneBucketUntilOldOnesExpire() {
        let limiter = SourceRateLimiter(limit: 1, maximumSources: 2)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(limiter.allow("a", now: t0))
        #expect(limiter.allow("b", now: t0))
        #expect(limiter.allow("c", now: t0), "first in the overflow bucket")
        #expect(!limiter.allow("d", now: t0), "the overflow bucket is shared")
        #expect(limiter.allow("e", now: t0.addingTimeInterval(61)), "expired sources were swept")
    }
}
