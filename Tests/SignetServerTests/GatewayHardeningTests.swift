// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// The gateway's edges, over real sockets: upstreams that answer early or vanish, paths that mean
/// something else to the upstream, keys that need no private key, smuggled identity fields, and
/// requests the HTTP parser refuses. Each was a defect once (issue 9); each keeps its reason code.
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
            #expect(ContinuousClock.now - started < .seconds(5), "round \(round)")
        }
        #expect(upstream.seen.count == 4)
    }

    // MARK: 2. Dot-segments and ambiguous paths

    @Test(arguments: [
        "/public/../api/items", "/public/%2e%2e/api/items", "/public/%2E%2E/transfers/1", "/public/.%2e/api",
        "/public/x/../../api", "/public/..",
    ])
    func dotSegmentsCannotWalkPastTheRouteTable(_ target: String) async throws {
        let (harness, upstream) = try await Self.gateway(.echo)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let answer = try await RawHTTP.exchange(port: harness.gateways[0].port, Self.get(target))
        #expect(RawHTTP.status(answer) == 401 && RawHTTP.reason(answer) == "signature_missing", "\(answer)")
        #expect(upstream.seen.isEmpty)
    }

    @Test(arguments: [
        "/public/%2F../api", "/public/..%2fapi", "/public/%5c..%5capi", "/public\\..\\api", "/public/%00",
        "/public//api", "/public/..;/api", "/public;jsessionid=1", "/public/%zz", "/public/%2",
        "/transfers#", "/public/..#", "/public/x?y#z", "/public/a\"b", "/public/a<b", "/public/{x}", "/public/a|b",
        "/public/a^b", "/public/a`b", "/public/[x]",
    ])
    func ambiguousPathsAreRefused(_ target: String) async throws {
        let (harness, upstream) = try await Self.gateway(.echo)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let answer = try await RawHTTP.exchange(port: harness.gateways[0].port, Self.get(target))
        #expect(RawHTTP.status(answer) == 400 && RawHTTP.reason(answer) == "path_ambiguous", "\(answer)")
        #expect(answer.contains("application/problem+json"))
        #expect(upstream.seen.isEmpty)
    }

    @Test func theUpstreamGetsTheNormalisedPathAndTheSignatureCoversTheSentOne() async throws {
        let (harness, upstream) = try await Self.gateway(.echo)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let port = harness.gateways[0].port
        var answer = try await RawHTTP.exchange(port: port, Self.get("/public/./a/../b%7e?q=%2e%2e"))
        #expect(RawHTTP.status(answer) == 200, "\(answer)")
        #expect(upstream.seen.last?.target == "/public/b~?q=%2e%2e")

        // A shared-secret client escaping into the device-key route is refused there, and its
        // nonce is not spent (authorisation comes before the claim).
        let bank = MessageSigner(
            key: try SigningKey(secret: GatewayHarness.bankSecret),
            keyID: "bank-v1",
            algorithm: HMACSHA256()
        )
        let escape = try HTTPMessage.request(
            method: "POST",
            uri: harness.base + "/public/../transfers/1",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"amount\":100}".utf8)
        )
        let signedEscape = try bank.sign(escape, created: Date(), nonce: "escape-nonce")
        answer = try await RawHTTP.exchange(port: port, Self.raw(signedEscape))
        #expect(RawHTTP.status(answer) == 403 && RawHTTP.reason(answer) == "trust_level_insufficient", "\(answer)")
        let unspent = try await harness.stores[0].claim(keyID: "bank-v1", nonce: "escape-nonce", until: Date() + 60, now: Date())
        #expect(unspent, "a request refused by its route spent no nonce")

        // A registered device signs the path as it sends it; the upstream acts on the normalised one.
        let device = try await harness.register(.ed25519)
        let signed = try device.signer.sign(
            try HTTPMessage.request(
                method: "POST",
                uri: harness.base + "/public/%2e%2e/transfers/./1",
                fields: [("Content-Type", "application/json")],
                body: Array("{\"amount\":100}".utf8)
            ),
            created: Date(),
            nonce: Nonce.random()
        )
        answer = try await RawHTTP.exchange(port: port, Self.raw(signed))
        #expect(RawHTTP.status(answer) == 200, "\(answer)")
        #expect(upstream.seen.last?.target == "/transfers/1")
        #expect(upstream.seen.last?.values("Signet-Trust-Level") == ["device-key"])
    }

    /// Hummingbird's trie, built from the table, answers as the table does for every path around
    /// the configured prefixes (nested prefixes, method sets, siblings, trailing slashes).
    @Test func theRouterAnswersAsTheRouteTableDoes() async throws {
        let routes: [GatewayConfiguration.Route] = [
            .init(prefix: "/a", access: .deviceKey),
            .init(prefix: "/a/b", access: .open),
            .init(prefix: "/x/y/z", methods: ["GET"], access: .open),
            .init(prefix: "/m/", access: .open),
        ]
        let (harness, upstream) = try await Self.gateway(.echo) { $0.routes = routes }
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let table = try RouteTableProbe.make(routes)
        let paths = [
            "/", "/q", "/a", "/a/", "/a/b", "/a/b/", "/a/bc", "/a/b/c", "/a/c", "/ab", "/x", "/x/y", "/x/y/z",
            "/x/y/z/w", "/x/y/q", "/x/q", "/m", "/m/", "/m/n", "/mm", "/a/b?x=1", "/A", "/A/B", "/a/B/c", "/X/y/Z",
            "/M/n",
        ]
        for method in ["GET", "POST", "DELETE"] {
            for path in paths {
                let answer = try await RawHTTP.exchange(
                    port: harness.gateways[0].port,
                    "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
                let expected = table(method, path) == "open" ? 200 : 401
                #expect(RawHTTP.status(answer) == expected, "\(method) \(path): table says \(table(method, path))")
            }
        }
    }

    // MARK: 3. Keys that need no private key

    @Test func registrationRefusesSmallOrderEd25519Keys() async throws {
        let harness = try await GatewayHarness.start(store: .memory)
        Cleanup.after { try await harness.stop() }
        for raw in [[0x01] + [UInt8](repeating: 0, count: 31), [UInt8](repeating: 0, count: 32)] {
            let challenge = try await harness.challenge()
            let body: [String: Any] = [
                "challenge": challenge, "alg": "ed25519",
                "publicKey": ["kty": "OKP", "crv": "Ed25519", "x": Base64.urlEncode(raw)],
                "signature": Base64.urlEncode([0x01] + [UInt8](repeating: 0, count: 63)),
            ]
            let answer = try await GatewayHarness.send(
                method: "POST",
                url: harness.base + "/signet/v1/devices",
                headers: [("Content-Type", "application/json")],
                body: Array(try JSONSerialization.data(withJSONObject: body))
            )
            #expect(answer.status == 400 && answer.reason == "invalid_key", "\(answer.text)")
        }
    }

    // MARK: 4. Smuggled identity and forwarding fields

    @Test func identityAndForwardingFieldsCannotBeSmuggledInAnySpelling() async throws {
        let (harness, upstream) = try await Self.gateway(.echo)
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let port = harness.gateways[0].port
        let smuggled = [
            "Signet_Key_Id: evil", "SIGNET-DEVICE: dev_evil", "signet_trust_level: client-certificate",
            "Signet-Anything: x", "X-Forwarded-For: 6.6.6.6", "X_Forwarded_For: 6.6.6.6",
            "X-Forwarded-Proto: https", "X-Forwarded-Host: evil.example", "Forwarded: for=6.6.6.6;proto=https",
            "X-Real-IP: 6.6.6.6", "Connection: X-Drop-Me", "X-Drop-Me: secret", "X-Keep: kept",
        ].map { $0 + "\r\n" }.joined()
        let answer = try await RawHTTP.exchange(port: port, Self.get("/public/x", smuggled))
        #expect(RawHTTP.status(answer) == 200, "\(answer)")
        let seen = try #require(upstream.seen.last)
        let names = seen.headers.map { $0.0.lowercased().replacingOccurrences(of: "_", with: "-") }
        #expect(!names.contains { $0.hasPrefix("signet-") }, "\(names)")
        #expect(seen.values("X-Forwarded-For") == ["127.0.0.1"])
        #expect(seen.values("X-Forwarded-Proto") == ["http"])
        #expect(seen.values("X-Forwarded-Host") == ["127.0.0.1"])
        #expect(seen.values("Forwarded") == ["for=127.0.0.1;proto=http;host=\"127.0.0.1\""])
        #expect(seen.values("X-Real-IP").isEmpty && seen.values("X_Forwarded_For").isEmpty)
        #expect(seen.values("X-Drop-Me").isEmpty)
        #expect(seen.values("X-Keep") == ["kept"])

        // Fields that make frameworks read another client address, method or URL.
        let redirecting = [
            "X-Client-IP: 6.6.6.6", "True-Client-IP: 6.6.6.6", "CF-Connecting-IP: 6.6.6.6", "Client-IP: 6.6.6.6",
            "X-Cluster-Client-IP: 6.6.6.6", "Fastly-Client-IP: 6.6.6.6", "X-Forwarded: for=6.6.6.6",
            "X-HTTP-Method-Override: DELETE", "X_HTTP_Method: DELETE", "X-Method-Override: DELETE",
            "X-Original-URL: /transfers/1", "X-Rewrite-URL: /transfers/1",
            "Front-End-Https: on", "X-Original-Uri: /transfers/1", "X-Host: evil.example",
        ].map { $0 + "\r\n" }.joined()
        let overridden = try await RawHTTP.exchange(port: port, Self.get("/public/y", redirecting))
        #expect(RawHTTP.status(overridden) == 200, "\(overridden)")
        let afterOverride = try #require(upstream.seen.last)
        let leaked = afterOverride.headers.map { $0.0.lowercased() }.filter {
            $0.contains("client-ip") || $0.contains("override") || $0.contains("method") || $0.contains("url")
                || $0 == "x-forwarded" || $0.contains("connecting") || $0 == "front-end-https" || $0 == "x-original-uri"
                || $0 == "x-host"
        }
        #expect(leaked.isEmpty, "\(leaked)")

        // A Host that could break out of the Forwarded parameter is not repeated upstream.
        let badHost = try await RawHTTP.exchange(
            port: port,
            "GET /public/z HTTP/1.1\r\nHost: a;for=127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        if RawHTTP.status(badHost) == 200, let last = upstream.seen.last {
            #expect(last.values("X-Forwarded-Host").isEmpty)
            #expect(last.values("Forwarded") == ["for=127.0.0.1;proto=http"])
        }

        // A verified client gets exactly the gateway's identity fields.
        let device = try await harness.register(.p256)
        var request = try HTTPMessage.request(method: "GET", uri: harness.base + "/items")
        request.fields.append(name: "Signet_Device", value: "dev_evil")
        let signed = try device.signer.sign(request, created: Date(), nonce: Nonce.random())
        let verified = try await RawHTTP.exchange(port: port, Self.raw(signed))
        #expect(RawHTTP.status(verified) == 200, "\(verified)")
        let last = try #require(upstream.seen.last)
        #expect(last.values("Signet-Device") == [device.deviceID])
        #expect(last.values("Signet-Key-Id") == [device.keyID])
        #expect(last.headers.filter { $0.0.lowercased().hasPrefix("signet") }.count == 3)

        // An uncovered `_` twin of a covered field: CGI-style servers would read it in its place.
        var amount = try HTTPMessage.request(method: "POST", uri: harness.base + "/items", fields: [("Content-Type", "application/json"), ("X-Amount", "1")], body: Array("{}".utf8))
        amount = try device.signer.sign(
            amount,
            components: [.method, .targetURI, .contentDigest, "content-type", "x-amount"],
            created: Date(),
            nonce: Nonce.random()
        )
        amount.fields.append(name: "X_Amount", value: "1000")
        let twin = try await RawHTTP.exchange(port: port, Self.raw(amount))
        #expect(RawHTTP.status(twin) == 200, "\(twin)")
        let afterTwin = try #require(upstream.seen.last)
        #expect(afterTwin.values("X-Amount") == ["1"])
        #expect(afterTwin.headers.allSatisfy { !$0.0.contains("_") }, "\(afterTwin.headers)")
    }

    /// The legacy scheme: the upstream gets the query rebuilt from what verified, so a second `msg`
    /// spelled another way (`ms%67`, PHP reads it as `msg` and takes the last) never reaches it.
    @Test func theLegacySchemeForwardsOnlyWhatVerified() async throws {
        let (harness, upstream) = try await Self.gateway(.echo) {
            $0.routes = [.init(prefix: "/legacy", access: .legacyQueryHMAC(keyId: "highscore-legacy"))]
        }
        Cleanup.after { try await harness.stop(); await upstream.stop() }
        let port = harness.gateways[0].port
        let valid = LegacyQueryHMAC(key: GatewayHarness.legacySecret).query(for: "{\"score\":90}")
        var answer = try await RawHTTP.exchange(port: port, Self.get("/legacy/score?" + valid + "&extra=1"))
        #expect(RawHTTP.status(answer) == 200, "\(answer)")
        #expect(upstream.seen.last?.target == "/legacy/score?" + valid)
        for smuggled in ["?" + valid + "&ms%67=999999", "?ms%67=999999&" + valid, "?x=1;msg=999999&" + valid] {
            answer = try await RawHTTP.exchange(port: port, Self.get("/legacy/score" + smuggled))
            #expect(RawHTTP.status(answer) == 400 && RawHTTP.reason(answer) == "malformed_header", "\(smuggled): \(answer)")
        }
        #expect(upstream.seen.count == 1)
    }

    // MARK: 5. Parser-level refusals carry reason codes

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
