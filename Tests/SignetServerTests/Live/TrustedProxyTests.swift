// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// The PROXY protocol, on real connections: the balancer's header names the client before the
/// first HTTP byte, and a trusted peer without a valid one is not served. (`X-Forwarded-For` and
/// `Forwarded` are router tests: TrustedProxyRouterTests.)
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
}
