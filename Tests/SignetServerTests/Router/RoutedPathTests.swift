// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import NIOHTTP1
import PropertyBased
import SignetMiddleware
import SignetServer
import SignetTestSupport
import Testing

/// The upstream acts on exactly the path the gateway routed: the request target it receives is the
/// upstream's base path, then the routed path, then the query as sent — written by the gateway, never
/// decoded and re-encoded by a URL type (issue 25: `/public/%FF?cmd=delete` reached the upstream as
/// `/?cmd=delete`, outside every route). Router tests: what the recording upstream received is the
/// target the gateway's upstream client writes byte for byte (GatewayHardeningTests checks the
/// wire).
@Suite(.awaitsCleanups) struct RoutedPathTests {
    static let routes: [GatewayConfiguration.Route] = [
        .init(prefix: "/public", methods: ["GET"], access: .open),
        .init(prefix: "/transfers", access: .deviceKey),
        .init(prefix: "/", access: .verified),
    ]

    /// A gateway on loopback in front of an echoing upstream mounted at `/api`.
    static func liveGateway() async throws -> (GatewayHarness, MisbehavingUpstream) {
        let upstream = try await MisbehavingUpstream.start(.echo)
        let harness = try await GatewayHarness.start(store: .memory) {
            $0.upstream = "http://127.0.0.1:\(upstream.port)/api/"
            $0.routes = routes
        }
        return (harness, upstream)
    }

    /// A gateway in front of a recording upstream mounted at `/api`, answering `200`.
    static func gateway() async throws -> (GatewayHarness, RecordingUpstream) {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router, upstreamOrigin: "http://upstream.test:8080/api/") {
            $0.routes = routes
        }
        let upstream = try #require(harness.upstream)
        upstream.answerEveryRequest(.respond(status: .ok, fields: [], body: []))
        return (harness, upstream)
    }

    /// One gateway for every case: these are cheap requests, not worth a server each.
    @Test func escapesThatAreNotUTF8AreRefusedBeforeRouting() async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let targets = [
            "/public/%FF?cmd=delete", "/public/%80", "/public/%C0%AE", "/public/%C0%AE%C0%AE/admin", "/public/%C3%28",
            "/public/%ED%A0%80", "/public/%F4%90%80%80", "/public/%E0%80%AF", "/public/%C3a%A9", "/public/%F0%9F%98",
            "/public/%FE%FF", "/public/a%C3",
        ]
        for target in targets {
            let answer = try await harness.sendAsWritten("GET", target)
            #expect(answer.status == 400 && answer.reason == "path_ambiguous", "\(target): \(answer.text)")
        }
        #expect(upstream.received.isEmpty, "\(upstream.received.map(\.target))")
    }

    @Test func theUpstreamGetsItsBasePathThenTheRoutedPathThenTheQueryAsSent() async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let cases = [
            ("/public/%C3%A9t%C3%A9?cmd=delete", "/api/public/%C3%A9t%C3%A9?cmd=delete"),
            ("/public/%e2%82%ac/./x/../y?q=%FF&r=%2e%2e", "/api/public/%E2%82%AC/y?q=%FF&r=%2e%2e"),
            ("/public?x", "/api/public?x"),
            ("/public/", "/api/public/"),
            ("/PUBLIC/%7euser", "/api/PUBLIC/~user"),
        ]
        for (sent, expected) in cases {
            let answer = try await harness.sendAsWritten("GET", sent)
            #expect(answer.status == 200, "\(sent): \(answer.text)")
            #expect(upstream.received.last?.target == expected, "\(sent)")
        }
        #expect(upstream.received.count == cases.count)
        #expect(upstream.received.allSatisfy { $0.authority == "upstream.test:8080" })
    }

    @Test func aQueryByteNoRequestLineCarriesIsRefused() async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        // A raw byte above 0x7F in the query: the parser lets it through, the gateway does not.
        let answer = try await harness.sendAsWritten("GET", "/public/x?q=\u{E9}")
        #expect(answer.status == 400, "\(answer.text)")
        #expect(upstream.received.isEmpty)
    }

    // MARK: The invariant, over generated paths

    static let pieces = [
        "public", "PUBLIC", "Public", "transfers", "api", "x", "..", ".", "%2e", "%2E%2e", ".%2e", "", "~a-b_c",
        "!$&'()*+,=:@", "%C3%A9", "%e2%82%ac", "%F0%9F%98%80", "%7e", "%41", "%2F", "%5C", "%00", ";x", "a%20b",
    ]

    /// A path segment from 64 random bits: mostly one of ``pieces``, else one to four escapes of
    /// arbitrary bytes (valid UTF-8 or not, in either case of hex digit).
    static func segment(_ bits: UInt64) -> String {
        guard bits & 0xFF >= 0xA0 else { return pieces[Int(bits & 0xFF) % pieces.count] }
        let count = 1 + Int((bits >> 8) & 3)
        return (0..<count).map { index in
            let byte = UInt8(truncatingIfNeeded: bits >> (16 + 8 * index))
            let hex = String(byte, radix: 16, uppercase: byte % 2 == 0)
            return "%" + (hex.count == 1 ? "0" + hex : hex)
        }.joined()
    }

    static let segments = Gen<UInt64>.value().array(of: 0...5).map { $0.map(segment) }
    static let prefix = Gen<String?>.element(of: ["/public/", "/public", "/PUBLIC/", "/", "/transfers/", "/public/.."]).map { $0! }
    static let query = Gen<String?>.element(of: ["", "?cmd=delete", "?q=%FF", "?a=%2e%2e/x&b=/../y", "?", "?x=%C3%A9&y=%C0"]).map { $0! }

    /// Every request is refused, or reaches the upstream once, at exactly `/api` + the routed path +
    /// the query as sent, inside the only open route; the routed path is a fixed point of routing and,
    /// escapes decoded, is the sent path with its dot-segments removed.
    @Test func everyRequestIsRefusedOrReachesTheUpstreamAtExactlyTheRoutedPath() async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        var outcomes: [Int: Int] = [:]
        await propertyCheck(count: 300, input: Self.prefix, Self.segments, Self.query) {
            prefix, segments, query in
            let path = prefix + segments.joined(separator: "/")
            let before = upstream.received.count
            let answer = try await harness.sendAsWritten("GET", path + query)
            let status: Int? = answer.status
            let reached = upstream.received.dropFirst(before)
            outcomes[status ?? 0, default: 0] += 1
            guard status == 200 else {
                #expect(reached.isEmpty, "\(path + query) was refused (\(status ?? 0)) yet reached \(reached.map(\.target))")
                #expect(
                    [400, 401].contains(status ?? 0),
                    "\(path + query): \(status ?? 0) \(answer.reason ?? answer.text)"
                )
                return
            }
            try #require(reached.count == 1, "\(path + query) answered 200 and reached the upstream \(reached.count) times")
            let target = reached.first!.target
            let (seenPath, seenQuery) = Self.split(target)
            #expect(seenQuery == Self.split(path + query).1, "the query changed on the way: \(target)")
            #expect(seenPath.hasPrefix("/api/"), "\(target)")
            let routed = String(seenPath.dropFirst(4))
            let lowered = routed.lowercased()
            #expect(lowered == "/public" || lowered.hasPrefix("/public/"), "\(path) reached \(target) without a signature")
            #expect((try? RoutingPath.normalize(routed)) == routed, "the routed path \(routed) is not a fixed point")
            #expect(Self.decoded(routed) == Self.model(path), "\(path) → \(routed)")
        }
        // The generator reaches every outcome: forwarded, refused as ambiguous, and routed elsewhere.
        #expect(outcomes[200, default: 0] >= 30 && outcomes[400, default: 0] >= 30 && outcomes[401, default: 0] >= 10, "\(outcomes)")
    }

    /// `RoutingPath.normalize` on its own, over many more targets than a gateway takes in a test:
    /// it refuses a target as ambiguous, or returns the sent path with its escapes of unreserved
    /// bytes decoded and its dot-segments removed, then the query as sent — the same whether the
    /// target takes its one-pass check (no escape, no dot-segment: returned as it is) or the full
    /// rewrite — and what it returns is a fixed point.
    @Test func normalisationRefusesOrRemovesDotSegmentsWhicheverPathItTakes() async {
        let plain = Gen<String?>.element(of: ["a", "b", "...", ".a", "a.", "..", ".", "", "%41", "x;y", "a#b", "~"]).map { $0! }
        let segments = Gen<UInt64>.value().array(of: 0...4).map { $0.map(Self.segment) }
        let query = Gen<String?>.element(of: ["", "?", "?a=1", "?a=%FF", "?a=1#f", "?a b", "?../x"]).map { $0! }
        var outcomes = (plainKept: 0, rewritten: 0, refused: 0)
        await propertyCheck(count: 3000, input: plain.array(of: 0...4), segments, query) { plainSegments, randomSegments, query in
            let path = "/" + (plainSegments + randomSegments).joined(separator: "/")
            guard let routed = try? RoutingPath.normalize(path + query) else {
                outcomes.refused += 1
                return
            }
            let (routedPath, routedQuery) = Self.split(routed)
            #expect(routedQuery == query, "\(path + query) → \(routed)")
            #expect(Self.decoded(routedPath) == Self.model(path), "\(path + query) → \(routed)")
            #expect((try? RoutingPath.normalize(routed)) == routed, "\(routed) is not a fixed point")
            if routed == path + query { outcomes.plainKept += 1 } else { outcomes.rewritten += 1 }
        }
        #expect(outcomes.plainKept >= 200 && outcomes.rewritten >= 200 && outcomes.refused >= 200, "\(outcomes)")
    }

    /// Path and query of a target (the query with its `?`).
    static func split(_ target: String) -> (String, String) {
        guard let mark = target.firstIndex(of: "?") else { return (target, "") }
        return (String(target[..<mark]), String(target[mark...]))
    }

    /// A path with its escapes decoded, as bytes.
    static func decoded(_ path: String) -> [UInt8] {
        var out: [UInt8] = []
        var bytes = Array(path.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%"), bytes.count >= 2, let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) {
                out.append(value)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        return out
    }

    /// The model: decode every escape (none of `/` survives routing), then remove dot-segments as
    /// RFC 3986 §5.2.4 does.
    static func model(_ path: String) -> [UInt8] {
        let segments = decoded(path).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        var output: [ArraySlice<UInt8>] = []
        var trailing = false
        for segment in segments {
            trailing = false
            if Array(segment) == Array(".".utf8) {
                trailing = true
            } else if Array(segment) == Array("..".utf8) {
                if !output.isEmpty { output.removeLast() }
                trailing = true
            } else if segment.isEmpty {
                trailing = true
            } else {
                output.append(segment)
            }
        }
        var result = Array("/".utf8) + Array(output.joined(separator: [UInt8(ascii: "/")]))
        if trailing, !output.isEmpty { result.append(UInt8(ascii: "/")) }
        return result
    }
}
