// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import NIOCore
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// The gateway's edges that only real sockets show: upstreams that answer early, reset or stall,
/// and requests the HTTP parser refuses. Each was a defect once (issue 9); each keeps its reason
/// code. (Paths, the trie, keys and smuggled fields are router tests: RoutingRouterTests.)
@Suite(.awaitsCleanups) struct GatewayHardeningTests {
    static let routes: [GatewayConfiguration.Route] = [
        .init(prefix: "/public", access: .open),
        .init(prefix: "/transfers", access: .deviceKey),
        .init(prefix: "/", access: .verified),
    ]

    static func gateway(
        _ behaviour: MisbehavingUpstream.Behaviour,
        adjust: @escaping (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> (GatewayHarness, MisbehavingUpstream) {
        let upstream = try await MisbehavingUpstream.start(behaviour)
        let harness = try await GatewayHarness.start(store: .memory) {
            $0.upstream = "http://127.0.0.1:\(upstream.port)"
            $0.routes = routes
            adjust(&$0)
        }
        return (harness, upstream)
    }

    /// Raw HTTP/1.1 (origin-form, with Host) for a signed message, as sent: dot-segments and all,
    /// closing after the answer.
    static func raw(_ message: HTTPMessage) -> String {
        let target = message.target!
        var lines = ["\(message.method!) \(target.pathValue)\(target.query.map { "?" + $0 } ?? "") HTTP/1.1"]
        lines.append("Host: \(target.authority)")
        for field in message.fields { lines.append("\(field.name): \(field.value)") }
        if !message.body.isEmpty { lines.append("Content-Length: \(message.body.count)") }
        lines.append("Connection: close")
        return lines.joined(separator: "\r\n") + "\r\n\r\n" + String(decoding: message.body, as: UTF8.self)
    }

    static let bank = MessageSigner(key: try! SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())

    static func get(_ target: String, _ extra: String = "") -> String {
        "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extra)Connection: close\r\n\r\n"
    }

    // MARK: 1. Upstreams that answer before reading the body

    @Test func anUpstreamThatAnswersBeforeReadingTheBodyCannotStopTheGateway() async throws {
        let (harness, upstream) = try await Self.gateway(.earlyAnswer) { $0.maxBodyBytes = 16 << 20 }
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let eightMegabytes = [UInt8](repeating: 0x61, count: 8 << 20)
        let bank = MessageSigner(
            key: try SigningKey(secret: GatewayHarness.bankSecret),
            keyID: "bank-v1",
            algorithm: HMACSHA256()
        )
        for round in 0..<3 {
            // Open (streamed by the old gateway) and verified, one after the other on each round.
            let open = try await GatewayHarness.send(method: "POST", url: harness.base + "/public/upload", body: eightMegabytes)
            #expect([200, 503].contains(open.status), "round \(round): \(open.status) \(open.text)")
            let message = try HTTPMessage.request(
                method: "POST",
                uri: harness.base + "/upload",
                fields: [("Content-Type", "application/octet-stream")],
                body: [UInt8](repeating: 0x62, count: 2 << 20)
            )
            let signed = try bank.sign(message, created: Date(), nonce: Nonce.random())
            let verified = try await GatewayHarness.send(signed)
            #expect([200, 503].contains(verified.status), "round \(round): \(verified.status) \(verified.text)")
        }
        // curl, as the report that found it did.
        let file = harness.folder.appendingPathComponent("eight-megabytes")
        try Data(eightMegabytes).write(to: file)
        for _ in 0..<2 {
            let code = try await Self.curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "@\(file.path)", harness.base + "/public/x"])
            #expect(["200", "503"].contains(code), "curl got \(code)")
        }
        let health = try await GatewayHarness.send(method: "GET", url: harness.base + "/healthz")
        #expect(health.status == 200 && health.text == "ok\n")
        #expect(upstream.seen.count >= 6)
    }

    @Test func anUpstreamThatResetsOrIsSlowIsAProblemNotACrash() async throws {
        let (reset, resetting) = try await Self.gateway(.reset)
        Cleanup.after { try await reset.stop(); await resetting.stop() }
        let answer = try await GatewayHarness.send(method: "POST", url: reset.base + "/public/x", body: Array("hello".utf8))
        #expect(answer.status == 503 && answer.reason == "upstream_unavailable", "\(answer.text)")

        let (slow, slowUpstream) = try await Self.gateway(.slow(.seconds(3))) { $0.upstreamTimeoutSeconds = 1 }
        Cleanup.after { try await slow.stop(); await slowUpstream.stop() }
        let late = try await GatewayHarness.send(method: "GET", url: slow.base + "/public/x")
        #expect(late.status == 503 && late.reason == "upstream_unavailable", "\(late.text)")
        #expect(try await GatewayHarness.send(method: "GET", url: slow.base + "/healthz").status == 200)
    }

    /// Answers that come whole in one read go out whole, framed as the upstream framed them: a `204`
    /// with no `Content-Length`, a `HEAD` answer with the length of the `GET`'s body and no body, a
    /// small `200` with its own length (curl reads the bytes as sent).
    @Test func wholeAnswersKeepTheUpstreamsFraming() async throws {
        let (harness, upstream) = try await Self.gateway(.echo)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        func curl(_ arguments: [String]) async throws -> String {
            try await SignetProcess.run("curl", ["-s", "-D", "-", "-o", "/dev/null", "--max-time", "10"] + arguments).stdout.lowercased()
        }
        let noContent = try await curl([harness.base + "/public/204"])
        #expect(noContent.hasPrefix("http/1.1 204") && !noContent.contains("content-length"), "\(noContent)")
        func length(_ answer: String) -> Int? {
            answer.split(separator: "\r\n").first { $0.hasPrefix("content-length: ") }.flatMap { Int($0.dropFirst(16)) }
        }
        let get = try await curl(["-w", "%{size_download}", harness.base + "/public/h"])
        #expect(get.hasPrefix("http/1.1 200") && get.hasSuffix("\r\n\r\n\(length(get) ?? -1)"), "\(get)")
        // The upstream's HEAD answer says the length of its GET body ("HEAD …" where "GET …").
        let head = try await curl(["-I", harness.base + "/public/h"])
        #expect(head.hasPrefix("http/1.1 200") && length(head) == (length(get) ?? 0) + 1, "\(head)")
        // A HEAD answer without a length (its GET would be chunked) is not made to say 0.
        let unknown = try await curl(["-I", harness.base + "/public/no-length"])
        #expect(unknown.hasPrefix("http/1.1 200") && length(unknown) == nil, "\(unknown)")
        #expect(upstream.seen.count == 4)
    }

    /// An answer in many small chunks arrives in one read, more parts than the gateway buffers for a
    /// reader that has not started: the kept-alive connection must read again afterwards, or the
    /// next request on it would never hear its answer (found in review: a 30 s wait, then 503).
    @Test func aConnectionThatBufferedAWholeAnswerServesTheNextRequest() async throws {
        let (harness, upstream) = try await Self.gateway(.chunked)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        for round in 0..<4 {
            let started = ContinuousClock.now
            let answer = try await GatewayHarness.send(method: "GET", url: harness.base + "/public/c\(round)", timeout: .seconds(10))
            #expect(answer.status == 200 && answer.text.hasPrefix("part 0\n") && answer.text.hasSuffix("part 39\n"), "\(answer.text)")
            // The defect was a 30 s wait for an answer that never came; a loaded machine takes a few.
            #expect(ContinuousClock.now - started < .seconds(15), "round \(round)")
        }
        #expect(upstream.seen.count == 4)
    }








    /// The gateway's own upstream connections: a HEAD answer has a length and no body, and the
    /// kept-alive connection still frames the next answer right; requests one after another reuse it.
    @Test func headAnswersAndKeptAliveConnectionsAreFramedRight() async throws {
        let (harness, upstream) = try await GatewayHardeningTests.gateway(.echo)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        for round in 0..<3 {
            let head = try await GatewayHarness.send(method: "HEAD", url: harness.base + "/public/h\(round)")
            #expect(head.status == 200 && head.body.isEmpty, "\(head.status) \(head.text)")
            #expect(head.headers.first(name: "Content-Length").flatMap(Int.init).map { $0 > 0 } == true)
            // Signed, the answer is held to be signed: the same framing, the upstream's length kept.
            let signedHead = try await GatewayHarness.send(
                try Self.bank.sign(try HTTPMessage.request(method: "HEAD", uri: harness.base + "/s\(round)"), created: Date(), nonce: Nonce.random())
            )
            #expect(signedHead.status == 200 && signedHead.body.isEmpty, "\(signedHead.status) \(signedHead.text)")
            #expect(signedHead.headers.first(name: "Content-Length").flatMap(Int.init).map { $0 > 0 } == true, "\(signedHead.headers)")
            #expect(signedHead.headers.first(name: "Signature-Input")?.hasPrefix("gateway=") == true)
            let get = try await GatewayHarness.send(method: "GET", url: harness.base + "/public/g\(round)")
            #expect(get.status == 200 && get.text.hasPrefix("GET /public/g\(round)"), "\(get.text)")
        }
        #expect(upstream.seen.map(\.target) == (0..<3).flatMap { ["/public/h\($0)", "/s\($0)", "/public/g\($0)"] })
    }

    /// The request target's bytes as the upstream client writes them on a real connection: the
    /// base path, the routed path, the query as sent (RoutedPathTests checks the routing itself).
    @Test func theUpstreamReceivesTheRequestTargetBytesOnTheWire() async throws {
        let (harness, upstream) = try await RoutedPathTests.liveGateway()
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let cases = [
            ("/public/%C3%A9t%C3%A9?cmd=delete", "/api/public/%C3%A9t%C3%A9?cmd=delete"),
            ("/public/%e2%82%ac/./x/../y?q=%FF&r=%2e%2e", "/api/public/%E2%82%AC/y?q=%FF&r=%2e%2e"),
            ("/public?x", "/api/public?x"),
            ("/public/", "/api/public/"),
            ("/PUBLIC/%7euser", "/api/PUBLIC/~user"),
        ]
        for (sent, expected) in cases {
            let answer = try await RawHTTP.exchange(port: harness.port, GatewayHardeningTests.get(sent))
            #expect(RawHTTP.status(answer) == 200, "\(sent): \(answer)")
            #expect(upstream.seen.last?.target == expected, "\(sent)")
        }
        #expect(upstream.seen.count == cases.count)
        #expect(upstream.seen.allSatisfy { $0.values("Host") == ["127.0.0.1:\(upstream.port)"] })
    }

    // MARK: 2. Parser-level refusals carry reason codes

    @Test func parserRefusalsAnswerProblemJSON() async throws {
        let (harness, upstream) = try await Self.gateway(.echo)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let port = harness.gateways[0].port
        let smuggling =
            "POST /public/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api HTTP/1.1\r\nHost: x\r\n\r\n"
        var answer = try await RawHTTP.exchange(port: port, smuggling)
        #expect(RawHTTP.status(answer) == 400 && RawHTTP.reason(answer) == "request_invalid", "\(answer)")
        let doubleLength = "POST /public/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde"
        answer = try await RawHTTP.exchange(port: port, doubleLength)
        #expect(RawHTTP.status(answer) == 400 && RawHTTP.reason(answer) == "request_invalid", "\(answer)")
        let huge = Self.get("/public/x", "X-Big: " + String(repeating: "a", count: 100 * 1024) + "\r\n")
        answer = try await RawHTTP.exchange(port: port, huge)
        #expect(RawHTTP.status(answer) == 431 && RawHTTP.reason(answer) == "header_too_large", "\(answer)")
        // A transfer coding nobody can frame (`xchunked`): refused as the request it is, not a 500.
        for coding in ["xchunked", "gzip", "chunked, gzip", "identity"] {
            answer = try await RawHTTP.exchange(port: port, "POST /public/x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: \(coding)\r\n\r\n0\r\n\r\n")
            #expect(RawHTTP.status(answer) == 400 && RawHTTP.reason(answer) == "request_invalid", "\(coding): \(answer)")
        }
        #expect(upstream.seen.isEmpty)
        // Methods nobody routes are problems too.
        answer = try await RawHTTP.exchange(port: port, "TRACE /public/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(RawHTTP.status(answer) == 404 && RawHTTP.reason(answer) == "not_found", "\(answer)")
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/healthz").status == 200)
    }

    static func curl(_ arguments: [String]) async throws -> String {
        try await SignetProcess.run("curl", arguments).stdout
    }
}
