// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// Behind a load balancer every request comes from the balancer (issue 25): with `trustedProxies`
/// the gateway takes the client's address from the balancer — `X-Forwarded-For` or `Forwarded`
/// here, the PROXY protocol in TrustedProxyTests — and keys every per-source limit by it (an IPv6
/// client by its /64); from anyone else, such fields count for nothing. The harness's requests come
/// from 127.0.0.1, as on loopback.
@Suite(.awaitsCleanups) struct TrustedProxyRouterTests {
    static func gateway(
        trusting ranges: [String] = ["127.0.0.1/32"],
        from source: TrustedProxies.Source = .xForwardedFor
    ) async throws -> (GatewayHarness, RecordingUpstream) {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) {
            $0.routes = [.init(prefix: "/public", access: .open), .init(prefix: "/", access: .verified)]
            $0.trustedProxies = ranges
            $0.clientAddressFrom = source
            $0.challengesPerSourcePerMinute = 2
        }
        let upstream = try #require(harness.upstream)
        upstream.answerEveryRequest(.respond(status: .ok, fields: [], body: []))
        return (harness, upstream)
    }

    static func challenge(_ harness: GatewayHarness, _ field: (String, String)?) async throws -> Int {
        try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/challenges",
            headers: field.map { [$0] } ?? []
        ).status
    }

    @Test func behindATrustedBalancerEachClientHasItsOwnLimitAndTheUpstreamSeesIt() async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let a = ("X-Forwarded-For", "203.0.113.1")
        #expect(try await Self.challenge(harness, a) == 201)
        #expect(try await Self.challenge(harness, a) == 201)
        #expect(try await Self.challenge(harness, a) == 429)
        // Another client behind the same balancer is not locked out by the first.
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.2")) == 201)
        // A client writing its own entries: they stay left of what the balancer appended.
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "198.51.100.9, 203.0.113.1")) == 429)
        // IPv6: one /64 is one source.
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "2001:db8:1:2::1")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "2001:db8:1:2::ffff")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "2001:db8:1:2:aaaa::1")) == 429)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "2001:db8:1:3::1")) == 201)
        // The upstream hears of the client, not of the balancer or what the client wrote.
        let answer = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/public/x",
            headers: [("X-Forwarded-For", "6.6.6.6, 203.0.113.5")]
        )
        #expect(answer.status == 200)
        #expect(upstream.received.last?.fields["X-Forwarded-For"] == ["203.0.113.5"])
        #expect(upstream.received.last?.fields["Forwarded"] == ["for=203.0.113.5;proto=http;host=\"\(harness.authority)\""])
        // An IPv4-mapped address is named as the IPv4 address it is, never in hex.
        let mapped = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/public/x",
            headers: [("X-Forwarded-For", "::ffff:203.0.113.7")]
        )
        #expect(mapped.status == 200)
        #expect(upstream.received.last?.fields["X-Forwarded-For"] == ["203.0.113.7"])
    }

    @Test func failedAdminCredentialsLockOneClientNotTheBalancer() async throws {
        let (harness, _) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        func admin(_ token: String, from client: String) async throws -> Int {
            try await GatewayHarness.send(
                method: "GET",
                url: harness.base + "/signet/v1/devices/dev_none",
                headers: [("Authorization", "Bearer \(token)"), ("X-Forwarded-For", client)]
            ).status
        }
        for _ in 0..<10 { #expect(try await admin("guess", from: "203.0.113.66") == 401) }
        #expect(try await admin(GatewayHarness.adminToken, from: "203.0.113.66") == 429)
        #expect(try await admin(GatewayHarness.adminToken, from: "203.0.113.67") == 404)
    }

    @Test func fromAnUntrustedPeerTheFieldsCountForNothing() async throws {
        let (harness, upstream) = try await Self.gateway(trusting: ["192.0.2.0/24"])
        Cleanup.after { try await harness.stop() }
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.1")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.2")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.3")) == 429, "one peer, one source")
        _ = try await GatewayHarness.send(method: "GET", url: harness.base + "/public/x", headers: [("X-Forwarded-For", "6.6.6.6")])
        #expect(upstream.received.last?.fields["X-Forwarded-For"] == ["127.0.0.1"])
    }

    @Test func rfc7239ForwardedIsReadWhenConfiguredAndOnlyThen() async throws {
        let (harness, _) = try await Self.gateway(from: .forwarded)
        Cleanup.after { try await harness.stop() }
        let client = ("Forwarded", "for=6.6.6.6, for=\"[2001:db8:cafe::17]:4711\";proto=https")
        #expect(try await Self.challenge(harness, client) == 201)
        #expect(try await Self.challenge(harness, client) == 201)
        #expect(try await Self.challenge(harness, ("Forwarded", "for=\"[2001:db8:cafe::99]\"")) == 429)
        // X-Forwarded-For is not what this balancer writes: it names nobody.
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.1")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.2")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.3")) == 429)
    }

    @Test func configurationRefusesRangesThatDoNotParse() throws {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.trustedProxies = ["10.0.0.1/8"]
        let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(error?.kind == .invalidValue && error?.message.hasPrefix("trustedProxies") == true)
    }
}
