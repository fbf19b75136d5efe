// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// Behind a load balancer every request comes from the balancer (issue 25): with `trustedProxies`
/// the gateway takes the client's address from the balancer — `X-Forwarded-For`, `Forwarded`, or
/// the PROXY protocol — and keys every per-source limit by it (an IPv6 client by its /64); from
/// anyone else, such fields count for nothing.
@Suite(.awaitsCleanups) struct TrustedProxyTests {
    static func gateway(
        trusting ranges: [String] = ["127.0.0.1/32"],
        from source: TrustedProxies.Source = .xForwardedFor
    ) async throws -> (GatewayHarness, MisbehavingUpstream) {
        let upstream = try await MisbehavingUpstream.start(.echo)
        let harness = try await GatewayHarness.start(store: .memory) {
            $0.upstream = "http://127.0.0.1:\(upstream.port)"
            $0.routes = [.init(prefix: "/public", access: .open), .init(prefix: "/", access: .verified)]
            $0.trustedProxies = ranges
            $0.clientAddressFrom = source
            $0.challengesPerSourcePerMinute = 2
        }
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
        Cleanup.after { try await harness.stop(); await upstream.stop() }
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
        #expect(upstream.seen.last?.values("X-Forwarded-For") == ["203.0.113.5"])
        #expect(upstream.seen.last?.values("Forwarded") == ["for=203.0.113.5;proto=http;host=\"127.0.0.1:\(harness.port)\""])
        // An IPv4-mapped address is named as the IPv4 address it is, never in hex.
        let mapped = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/public/x",
            headers: [("X-Forwarded-For", "::ffff:203.0.113.7")]
        )
        #expect(mapped.status == 200)
        #expect(upstream.seen.last?.values("X-Forwarded-For") == ["203.0.113.7"])
    }

    @Test func failedAdminCredentialsLockOneClientNotTheBalancer() async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop(); await upstream.stop() }
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
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.1")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.2")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.3")) == 429, "one peer, one source")
        _ = try await GatewayHarness.send(method: "GET", url: harness.base + "/public/x", headers: [("X-Forwarded-For", "6.6.6.6")])
        #expect(upstream.seen.last?.values("X-Forwarded-For") == ["127.0.0.1"])
    }

    @Test func rfc7239ForwardedIsReadWhenConfiguredAndOnlyThen() async throws {
        let (harness, upstream) = try await Self.gateway(from: .forwarded)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let client = ("Forwarded", "for=6.6.6.6, for=\"[2001:db8:cafe::17]:4711\";proto=https")
        #expect(try await Self.challenge(harness, client) == 201)
        #expect(try await Self.challenge(harness, client) == 201)
        #expect(try await Self.challenge(harness, ("Forwarded", "for=\"[2001:db8:cafe::99]\"")) == 429)
        // X-Forwarded-For is not what this balancer writes: it names nobody.
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.1")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.2")) == 201)
        #expect(try await Self.challenge(harness, ("X-Forwarded-For", "203.0.113.3")) == 429)
    }

    // MARK: PROXY protocol

    static func v2Header(source: [UInt8], destination: [UInt8], command: UInt8 = 0x21, tlvs: [UInt8] = []) -> [UInt8] {
        let family: UInt8 = source.count == 4 ? 0x11 : 0x21
        let body = source + destination + [0x12, 0x34, 0x01, 0xBB] + tlvs
        return [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, command, family]
            + [UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    static func challengeRequest(after header: [UInt8]) -> [UInt8] {
        header + Array("POST /signet/v1/challenges HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
    }

    @Test func theProxyProtocolNamesTheClientInVersionOneAndTwo() async throws {
        let (harness, upstream) = try await Self.gateway(from: .proxyProtocol)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let port = harness.port
        let v1 = Array("PROXY TCP4 203.0.113.7 192.0.2.1 56324 443\r\n".utf8)
        let v2 = Self.v2Header(source: [203, 0, 113, 7], destination: [192, 0, 2, 1], tlvs: [0x04, 0x00, 0x02, 0xAB, 0xCD])
        // One client, whichever version names it: two challenges, then its limit.
        #expect(RawHTTP.status(try await RawHTTP.exchange(port: port, bytes: Self.challengeRequest(after: v1))) == 201)
        #expect(RawHTTP.status(try await RawHTTP.exchange(port: port, bytes: Self.challengeRequest(after: v2))) == 201)
        #expect(RawHTTP.status(try await RawHTTP.exchange(port: port, bytes: Self.challengeRequest(after: v1))) == 429)
        let other = Self.v2Header(source: Array(repeating: 0x20, count: 1) + [0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1], destination: Array(repeating: 0, count: 16))
        #expect(RawHTTP.status(try await RawHTTP.exchange(port: port, bytes: Self.challengeRequest(after: other))) == 201)
        // The upstream hears of the client the header named; a header field saying otherwise is ignored.
        let proxied = String(decoding: Array("PROXY TCP6 2001:db8::5 2001:db8::1 4711 443\r\n".utf8), as: UTF8.self)
            + "GET /public/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 6.6.6.6\r\nConnection: close\r\n\r\n"
        #expect(RawHTTP.status(try await RawHTTP.exchange(port: port, proxied)) == 200)
        #expect(upstream.seen.last?.values("X-Forwarded-For") == ["2001:db8::5"])
        // LOCAL (a balancer's health check): the balancer itself.
        let local = Self.v2Header(source: [], destination: [], command: 0x20)
        let health = local + Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
        #expect(RawHTTP.status(try await RawHTTP.exchange(port: port, bytes: health)) == 200)
    }

    @Test func aTrustedPeerWithoutAValidHeaderIsNotServed() async throws {
        let (harness, upstream) = try await Self.gateway(from: .proxyProtocol)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        for header in ["", "PROXY TCP4 203.0.113.7 192.0.2.1\r\n", "PROXY TCP4 2001:db8::1 192.0.2.1 1 2\r\n", "PROXY " + String(repeating: "x", count: 120)] {
            let answer = try await RawHTTP.exchange(port: harness.port, header + "GET /public/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(answer.isEmpty, "\(header.debugDescription): \(answer.prefix(80))")
        }
        #expect(upstream.seen.isEmpty)
    }

    @Test func configurationRefusesRangesThatDoNotParse() throws {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.trustedProxies = ["10.0.0.1/8"]
        let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(error?.kind == .invalidValue && error?.message.hasPrefix("trustedProxies") == true)
    }
}
