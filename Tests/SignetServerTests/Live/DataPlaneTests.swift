// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import PropertyBased
import SignetCore
@testable import SignetServer
import SignetTestSupport
import Testing

/// The event-loop data plane (`LoopProxyHandler`) on real connections: requests to `open` routes
/// (and signature routes: `VerifiedDataPlaneTests`) are forwarded on the connection's loop,
/// everything else by Hummingbird, and a client cannot
/// tell which — the same fields both ways, the same order on one connection, the same refusals,
/// and a request judged by the configuration in force when it is complete.
@Suite(.awaitsCleanups) struct DataPlaneTests {
    static func gateway(_ adjust: @escaping (inout GatewayConfiguration) -> Void = { _ in }) async throws -> GatewayHarness {
        try await GatewayHarness.start {
            $0.routes.insert(.init(prefix: "/echo", access: .open), at: 0)
            $0.routes.insert(.init(prefix: "/large", access: .open), at: 0)
            adjust(&$0)
        }
    }

    static func forwarded(_ harness: GatewayHarness) -> Int {
        harness.gateway.listeners.dataPlane.forwardedCount
    }

    /// The JSON body of the last response in `raw`.
    static func body(_ raw: String) -> [String: Any]? {
        guard let range = raw.range(of: "\r\n\r\n", options: .backwards) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(raw[range.upperBound...].utf8))) as? [String: Any]
    }

    @Test func anOpenRouteIsForwardedOnTheLoopWithTheGatewaysOwnFields() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let connection = try await RawConnection.open(port: harness.port)
        Cleanup.after { await connection.close() }
        let body = "{\"n\":1}"
        try await connection.send(Array((
            "POST /echo/a/../b?x=1 HTTP/1.1\r\nHost: scores.example\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Signet-Trust-Level: attested\r\nX-Forwarded-For: 203.0.113.9\r\nConnection: keep-alive, X-Drop\r\nX-Drop: 1\r\n\r\n" + body
        ).utf8))
        let answer = try await connection.response()
        #expect(RawHTTP.status(answer) == 200, "\(answer)")
        #expect(Self.forwarded(harness) == 1)
        let head = answer.lowercased()
        #expect(head.contains("\r\nserver: signet\r\n") && head.contains("\r\ndate: "), "\(answer)")
        let echo = try #require(Self.body(answer), "\(answer)")
        // The routed path, the body, and the gateway's fields in place of the client's.
        #expect(echo["path"] as? String == "/echo/b?x=1")
        #expect(echo["bodyBytes"] as? Int == body.utf8.count)
        let fields = try #require(echo["headers"] as? [String: String])
        #expect(fields["x-forwarded-for"] == "127.0.0.1")
        #expect(fields["forwarded"] == "for=127.0.0.1;proto=http;host=\"scores.example\"")
        #expect(fields["signet-trust-level"] == nil && fields["x-drop"] == nil && fields["connection"] == nil)
        #expect(fields["content-length"] == String(body.utf8.count))
        #expect(fields["x-request-id"].map { $0.count == 36 } == true)
        // A route that verifies refuses an unsigned request (`VerifiedDataPlaneTests`): nothing forwarded.
        try await connection.send(Array("GET /scores HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let refused = try await connection.responses(2)
        #expect(refused.contains("signature_missing"), "\(refused)")
        #expect(Self.forwarded(harness) == 1)
    }

    /// Nothing of a request outlives its answer: every exchange is gone once the answers are in,
    /// whether the upstream answered, the client left mid-answer, or the upstream was not there.
    @Test func noExchangeOutlivesItsAnswer() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let plane = harness.gateway.listeners.dataPlane
        let connection = try await RawConnection.open(port: harness.port)
        for index in 0..<20 {
            try await connection.send(Array("POST /echo/\(index) HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc".utf8))
        }
        #expect(try await connection.responses(20).components(separatedBy: "HTTP/1.1 200").count - 1 == 20)
        await connection.close()
        // Clients that leave while a large answer is relayed, at different moments: each is
        // noticed (the connection's close, which Hummingbird's state handler does not pass on —
        // missed, the exchange waited a minute for the upstream's stalled-reader limit).
        for round in 0..<10 {
            let leaving = try await RawConnection.open(port: harness.port)
            try await leaving.send(Array("GET /large/8388608 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            try await Task.sleep(for: .milliseconds(round * 10))
            await leaving.close()
        }
        var live = plane.liveExchanges
        for _ in 0..<500 where live != 0 {
            try await Task.sleep(for: .milliseconds(20))
            live = plane.liveExchanges
        }
        #expect(live == 0)
        #expect(Self.forwarded(harness) >= 20)
    }

    /// Pipelined requests are answered in the order they came, whichever path answers each: while
    /// an answer of Hummingbird's is pending, the requests after it are Hummingbird's too.
    @Test func pipelinedRequestsAreAnsweredInOrderAcrossBothPaths() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let connection = try await RawConnection.open(port: harness.port)
        Cleanup.after { await connection.close() }
        let requests = [
            "GET /echo/1 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /scores HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /echo/3 HTTP/1.1\r\nHost: x\r\n\r\n",
            "POST /echo/4 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            "GET /signet/v1/.well-known/none HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /echo/6 HTTP/1.1\r\nHost: x\r\n\r\n",
        ]
        try await connection.send(Array(requests.joined().utf8))
        let answers = try await connection.responses(requests.count)
        let statuses = answers.components(separatedBy: "HTTP/1.1 ").dropFirst().map { Int($0.prefix(3)) }
        #expect(statuses == [200, 401, 200, 200, 404, 200], "\(answers)")
        let paths = answers.components(separatedBy: "\"path\":\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(paths == ["\\/echo\\/1", "\\/echo\\/3", "\\/echo\\/4", "\\/echo\\/6"], "\(answers)")
        // The first, third and fourth (the second refused on the loop); the sixth came while
        // Hummingbird's answer to the fifth, Signet's own endpoint, was pending.
        #expect(Self.forwarded(harness) == 3)
        #expect(harness.gateway.listeners.dataPlane.refusedCount == 1)
    }

    /// The route is decided again when the request is complete: a reload between its head and its
    /// end that makes the route verify has the request refused, never forwarded.
    @Test func aReloadBeforeTheBodyEndsJudgesTheRequestByTheNewRoute() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let connection = try await RawConnection.open(port: harness.port)
        Cleanup.after { await connection.close() }
        try await connection.send(Array("POST /echo/held HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345".utf8))
        try await Task.sleep(for: .milliseconds(200))
        var configuration = harness.gateway.configuration
        configuration.routes.removeAll { $0.prefix == "/echo" }
        try harness.gateways[0].reloader.reload(to: configuration)
        try await connection.send(Array("67890".utf8))
        let answer = try await connection.response()
        #expect(RawHTTP.status(answer) == 401 && RawHTTP.reason(answer) == "signature_missing", "\(answer)")
        #expect(Self.forwarded(harness) == 0)
    }

    /// A body past `maxBodyBytes` is refused as Hummingbird refuses it, whoever began reading it.
    @Test func aBodyPastTheLimitIsRefusedAndNotForwarded() async throws {
        let harness = try await Self.gateway { $0.maxBodyBytes = 1024 }
        Cleanup.after { try await harness.stop() }
        for framing in ["Transfer-Encoding: chunked\r\n\r\n800\r\n" + String(repeating: "a", count: 2048) + "\r\n0\r\n\r\n",
                        "Content-Length: 2048\r\n\r\n" + String(repeating: "a", count: 2048)] {
            let connection = try await RawConnection.open(port: harness.port)
            try await connection.send(Array(("POST /echo/big HTTP/1.1\r\nHost: x\r\n" + framing).utf8))
            let answer = try await connection.response()
            #expect(RawHTTP.status(answer) == 413 && RawHTTP.reason(answer) == "body_too_large", "\(framing.prefix(30)): \(answer)")
            await connection.close()
        }
        #expect(Self.forwarded(harness) == 0)
    }

    /// The invariant, whatever the framing and however the body is cut into reads: a body within
    /// `maxBodyBytes` reaches the upstream whole and exactly once; one past it is refused
    /// `body_too_large` and nothing reaches the upstream. (A part lost where the loop hands a
    /// request to Hummingbird once forwarded a shorter body.)
    @Test func aBodyReachesTheUpstreamWholeOrIsRefusedHoweverItIsCut() async throws {
        let harness = try await Self.gateway { $0.maxBodyBytes = 1024 }
        Cleanup.after { try await harness.stop() }
        let input = zip(Gen.int(in: 1000...1050), Gen.bool, Gen.int(in: 1...1060).array(of: 0...4))
        await propertyCheck(count: 40, input: input) { length, chunked, cuts in
            let body = String(repeating: "b", count: length)
            let framing = chunked
                ? "Transfer-Encoding: chunked\r\n\r\n" + String(length, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
                : "Content-Length: \(length)\r\n\r\n" + body
            let request = Array(("POST /echo/cut HTTP/1.1\r\nHost: x\r\n" + framing).utf8)
            let before = Self.forwarded(harness)
            let connection = try await RawConnection.open(port: harness.port)
            defer { Task { await connection.close() } }
            var sent = 0
            for cut in Set(cuts.map { min($0 + 40, request.count) }).sorted() where cut > sent {
                try await connection.send(Array(request[sent..<cut]))
                sent = cut
                try await Task.sleep(for: .milliseconds(5))
            }
            try await connection.send(Array(request[sent...]))
            let answer = try await connection.response()
            if length <= 1024 {
                #expect(RawHTTP.status(answer) == 200 && Self.body(answer)?["bodyBytes"] as? Int == length, "\(answer)")
                #expect(Self.forwarded(harness) == before + 1)
            } else {
                #expect(RawHTTP.status(answer) == 413 && RawHTTP.reason(answer) == "body_too_large", "\(answer)")
                #expect(Self.forwarded(harness) == before)
            }
        }
    }

    /// An upstream that cannot be reached: the reason code, the access-log line and the metrics,
    /// as on Hummingbird's path.
    @Test func anUnreachableUpstreamIsRefusedWithItsReasonCodeAndLogged() async throws {
        let logs = CapturedLogs()
        let harness = try await GatewayHarness.start(logger: logs.logger(level: .info))
        Cleanup.after { try await harness.stop() }
        await harness.backendServer.stop()
        let connection = try await RawConnection.open(port: harness.port)
        Cleanup.after { await connection.close() }
        try await connection.send(Array("GET /scores/top HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-17\r\n\r\n".utf8))
        let answer = try await connection.response()
        #expect(RawHTTP.status(answer) == 502 && RawHTTP.reason(answer) == "upstream_unreachable", "\(answer)")
        #expect(Self.forwarded(harness) == 1)
        let line = try #require(logs.all.first { $0.message == "request" && $0.metadata["request_id"] == "req-17" })
        #expect(line.metadata["route"] == "/scores/top" && line.metadata["status"] == "502")
        #expect(line.metadata["reason"] == "upstream_unreachable" && line.metadata["client"] == "127.0.0.1")
        // And the connection serves the next request.
        try await connection.send(Array("GET /scores HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try await connection.responses(2).contains("signature_missing"))
    }

    /// `Connection: close` is honoured: the answer, then the connection closes.
    @Test func aClientThatAsksToCloseGetsItsAnswerThenTheClose() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let connection = try await RawConnection.open(port: harness.port)
        try await connection.send(Array("GET /echo/last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        let answer = try await connection.response()
        #expect(RawHTTP.status(answer) == 200, "\(answer)")
        #expect(await connection.isClosed(within: .seconds(2)))
        #expect(Self.forwarded(harness) == 1)
    }
}

/// The data plane's `Date` values, against RFC 9110's own example and Foundation's formatter.
@Suite struct HTTPDateTests {
    @Test func datesAreIMFFixdate() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        for second in [951_782_400, 1_709_164_800, 1_798_761_599, 4_107_542_400, 1_234_567_890] {
            #expect(HTTPDate.format(second) == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(second))), "\(second)")
        }
    }
}
