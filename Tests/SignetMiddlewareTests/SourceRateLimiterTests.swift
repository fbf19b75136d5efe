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

    /// Past the cap the source tracked longest is forgotten (it only gets a fresh count); no
    /// newcomer is ever refused for the others' sake (issue 25: a shared overflow bucket let anyone
    /// with enough IPv6 prefixes lock every new client out).
    @Test func pastTheCapTheOldestSourceIsForgottenAndNoNewcomerIsRefused() {
        let limiter = SourceRateLimiter(limit: 1, maximumSources: 2)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(limiter.allow("10.0.0.1", now: t0))
        #expect(!limiter.allow("10.0.0.1", now: t0), "its own limit holds")
        #expect(limiter.allow("10.0.0.2", now: t0))
        // A flood of fresh sources: each is let in once, never refused for the others.
        for index in 3..<1_000 { #expect(limiter.allow("10.0.\(index / 256).\(index % 256)", now: t0)) }
        // The first was forgotten along the way: a fresh count.
        #expect(limiter.allow("10.0.0.1", now: t0))
        #expect(!limiter.allow("10.0.0.1", now: t0))
    }
}
