// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetPostgres
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// Issue 40 §4: per-source limits are kept in the store, so every instance on it enforces one
/// count. Before, one client through two instances got 118 of 130 challenges where the limit was
/// 60 a minute, and a reload gave it a fresh allowance.
@Suite(.awaitsCleanups) struct SharedLimitsLiveTests {
    /// 130 challenges from one client, alternating between two gateways on one PostgreSQL, within a
    /// minute: exactly 60 are issued, and each refusal says when to come back.
    @Test(.enabled(if: TestPostgres.url != nil, "no PostgreSQL server (SIGNET_POSTGRES_URL)"))
    func twoInstancesOnPostgreSQLIssueTheLimitOnce() async throws {
        let server = try #require(TestPostgres.url)
        let url = try await PostgresStore.createDatabase(url: server, named: "signet_limits_\(UInt64.random(in: 0...UInt64.max))")
        let harness = try await GatewayHarness.start(store: .postgres(url), instances: 2) { $0.challengesPerSourcePerMinute = 60 }
        Cleanup.after { try await harness.stop() }
        try await Self.expectTheLimitOnce(harness)
    }

    /// Two processes on one SQLite file (one host) share the count the same way.
    @Test func twoInstancesOnOneSQLiteFileIssueTheLimitOnce() async throws {
        let harness = try await GatewayHarness.start(store: .sqlite, instances: 2) { $0.challengesPerSourcePerMinute = 60 }
        Cleanup.after { try await harness.stop() }
        try await Self.expectTheLimitOnce(harness)
    }

    static func expectTheLimitOnce(_ harness: GatewayHarness) async throws {
        var issued = 0
        var retryAfters: Set<Int> = []
        for index in 0..<130 {
            let answer = try await GatewayHarness.send(method: "POST", url: harness.url(index % 2) + "/signet/v1/challenges")
            switch answer.status {
            case 201: issued += 1
            case 429:
                #expect(answer.reason == "rate_limited")
                retryAfters.insert(try #require(answer.headers.first(name: "Retry-After").flatMap { Int($0) }))
            default: Issue.record("unexpected \(answer.status) \(answer.text)")
            }
        }
        #expect(issued == 60)
        #expect(retryAfters.allSatisfy { (1...60).contains($0) }, "\(retryAfters)")
        // Each refusal is kept with the instance that refused it (the console's Instance column).
        var instances: Set<String> = []
        for _ in 0..<50 where instances.count < 2 {
            try await Task.sleep(for: .milliseconds(100))
            let refused = try await harness.store.refusals(reason: "rate_limited", before: nil, limit: 200)
            instances = Set(refused.compactMap(\.instance))
        }
        #expect(instances == ["instance-0", "instance-1"])
        // A reload gives the source no fresh allowance.
        let reloader = harness.gateways[0].reloader
        try reloader.reload(to: try #require(reloader.configuration))
        let after = try await GatewayHarness.send(method: "POST", url: harness.url(0) + "/signet/v1/challenges")
        #expect(after.status == 429, "\(after.status)")
    }

    /// Ten wrong admin tokens on one instance lock the source out of the other's admin API, the
    /// right token included.
    @Test(.enabled(if: TestPostgres.url != nil, "no PostgreSQL server (SIGNET_POSTGRES_URL)"))
    func failedAdminTokensOnOneInstanceLockTheOtherToo() async throws {
        let server = try #require(TestPostgres.url)
        let url = try await PostgresStore.createDatabase(url: server, named: "signet_limits_\(UInt64.random(in: 0...UInt64.max))")
        let harness = try await GatewayHarness.start(store: .postgres(url), instances: 2)
        Cleanup.after { try await harness.stop() }
        let path = "/signet/v1/devices/nobody"
        for _ in 0..<10 {
            let wrong = try await GatewayHarness.send(method: "GET", url: harness.url(0) + path, headers: [("Authorization", "Bearer wrong")])
            #expect(wrong.status == 401, "\(wrong.status) \(wrong.text)")
        }
        let right = try await GatewayHarness.send(
            method: "GET", url: harness.url(1) + path, headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")])
        #expect(right.status == 429 && right.reason == "rate_limited", "\(right.status) \(right.text)")
    }
}
