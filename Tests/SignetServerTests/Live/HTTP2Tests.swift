// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import SignetCore
@testable import SignetServer
import SignetTestSupport
import Testing

/// Issue 40 §3: HTTP/2 over TLS on the apps' listener (ALPN `h2`, `http/1.1`), verified, limited
/// and routed exactly as HTTP/1.1 is, against clients we did not write: curl (nghttp2), httpx and
/// the h2 state machine for what no well-behaved client sends.
@Suite(.awaitsCleanups) struct HTTP2Tests {
    static let bank = MessageSigner(key: try! SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())

    /// A gateway over TLS with its development certificate, `/echo` open (the backend echoes the
    /// path it received); the CA file a client trusts.
    static func gateway(
        http2: Bool? = nil,
        adjust: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> (GatewayHarness, caFile: String) {
        let harness = try await GatewayHarness.start(tls: .init(development: true, http2: http2)) {
            $0.routes.insert(.init(prefix: "/echo", access: .open), at: 0)
            adjust(&$0)
        }
        let caFile = harness.folder.appendingPathComponent("gateway-ca.pem").path
        try Data(try #require(harness.gateway.tls?.chainPEM).utf8).write(to: URL(fileURLWithPath: caFile))
        return (harness, caFile)
    }

    static func curl(_ arguments: [String]) async throws -> String {
        let result = try await SignetProcess.run("curl", ["-s"] + arguments)
        return result.stdout
    }

    @Test func curlNegotiatesHTTP2AndHTTP1StaysOnOffer() async throws {
        let (harness, ca) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let url = harness.base + "/scores/top"
        #expect(try await Self.curl(["--cacert", ca, "--http2", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", url]) == "2 200")
        #expect(try await Self.curl(["--cacert", ca, "--http1.1", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", url]) == "1.1 200")

        // `"http2": false` offers HTTP/1.1 alone.
        let (plain, plainCA) = try await Self.gateway(http2: false)
        Cleanup.after { try await plain.stop() }
        #expect(
            try await Self.curl(["--cacert", plainCA, "--http2", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", plain.base + "/scores/top"])
                == "1.1 200")
    }

    /// A signed POST sent by curl over HTTP/2 is accepted once; its copy is a replay.
    @Test func aSignedRequestOverHTTP2IsAcceptedOnce() async throws {
        let (harness, ca) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let message = try HTTPMessage.request(
            method: "POST",
            uri: harness.base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array(#"{"name":"h2","score":2}"#.utf8)
        )
        let signed = try Self.bank.sign(message, created: Date(), nonce: Nonce.random())
        let bodyFile = harness.folder.appendingPathComponent("body.json")
        try Data(signed.body).write(to: bodyFile)
        var arguments = ["--cacert", ca, "--http2", "-o", "-", "-w", "\n%{http_version} %{http_code}", "--data-binary", "@\(bodyFile.path)"]
        for field in signed.fields.lines where field.name.lowercased() != "content-length" {
            arguments += ["-H", "\(field.name): \(field.value)"]
        }
        arguments.append(harness.base + "/scores")
        let first = try await Self.curl(arguments)
        #expect(first.hasSuffix("\n2 201"), "\(first)")
        let second = try await Self.curl(arguments)
        #expect(second.hasSuffix("\n2 401") && second.contains("nonce_replayed"), "\(second)")
        #expect(harness.backend.receivedCount == 1)
        // Both answered by the event-loop data plane on the stream (issue 39), not by Hummingbird.
        #expect(harness.gateway.listeners.dataPlane.forwardedCount == 1)
        #expect(harness.gateway.listeners.dataPlane.refusedCount == 1)
    }

    /// The upstream receives exactly the routed path whichever version carried the request: the
    /// same targets, written as they are (`--path-as-is`), get the same answer and the same path
    /// upstream over HTTP/2 as over HTTP/1.1.
    @Test func theUpstreamReceivesTheSamePathOverEitherVersion() async throws {
        let (harness, ca) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let targets = [
            "/echo/a", "/echo/a/../b", "/echo/./a", "/echo//a", "/echo/%2e%2e/signet/v1/challenges", "/echo/a%2Fb",
            "/echo/a?x=1&y=%20", "/echo/../scores", "/ECHO/a", "/echo/a;b", "/echo/%00", "/echo/caf%C3%A9",
        ]
        var seen: [String: String] = [:]
        for target in targets {
            var answers: [String] = []
            for version in ["--http1.1", "--http2"] {
                let out = try await Self.curl(["--cacert", ca, version, "--path-as-is", "-o", "-", "-w", "\n%{http_code}", harness.base + target])
                let status = String(out.split(separator: "\n").last ?? "")
                let body = out.dropLast(status.count + 1)
                let echo = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
                let reason = (echo?["reason"] as? String) ?? ""
                answers.append("\(status) \(echo?["path"] as? String ?? reason)")
            }
            #expect(answers[0] == answers[1], "\(target): HTTP/1.1 \(answers[0]), HTTP/2 \(answers[1])")
            seen[target] = answers[1]
        }
        // What both agree on: dot-segments resolved before routing, ambiguous spellings refused.
        #expect(seen["/echo/a/../b"] == "200 /echo/b")
        #expect(seen["/echo/a?x=1&y=%20"] == "200 /echo/a?x=1&y=%20")
        #expect(seen["/echo/a%2Fb"] == "400 path_ambiguous")
        #expect(seen["/echo/../scores"] == "401 signature_missing")
    }

    /// httpx sends 24 signed requests at once over one HTTP/2 connection (a stream each): each is
    /// verified and accepted once; the same 24 again are all replays.
    @Test func httpxMultiplexesSignedRequestsEachAcceptedOnce() async throws {
        let (harness, ca) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        var requests: [[String: Any]] = []
        for index in 0..<24 {
            let message = try HTTPMessage.request(
                method: "POST",
                uri: harness.base + "/scores",
                fields: [("Content-Type", "application/json")],
                body: Array(#"{"name":"stream \#(index)","score":\#(index)}"#.utf8)
            )
            let signed = try Self.bank.sign(message, created: Date(), nonce: Nonce.random())
            requests.append([
                "method": "POST", "url": harness.base + "/scores", "body_b64": Base64.encode(signed.body),
                "headers": signed.fields.lines.filter { $0.name.lowercased() != "content-length" }.map { [$0.name, $0.value] },
            ])
        }
        let file = harness.folder.appendingPathComponent("requests.json")
        try JSONSerialization.data(withJSONObject: requests).write(to: file)
        let first = try Self.answers(try await PythonPeer.run("http2_peer.py", ["send", ca, file.path]))
        #expect(first.allSatisfy { $0["status"] as? Int == 201 && $0["http_version"] as? String == "HTTP/2" }, "\(first)")
        let again = try Self.answers(try await PythonPeer.run("http2_peer.py", ["send", ca, file.path]))
        #expect(again.allSatisfy { $0["status"] as? Int == 401 && $0["reason"] as? String == "nonce_replayed" }, "\(again)")
        #expect(harness.backend.receivedCount == 24)
        // Every stream verified, forwarded or refused on its own loop by the data plane.
        #expect(harness.gateway.listeners.dataPlane.forwardedCount == 24)
        #expect(harness.gateway.listeners.dataPlane.refusedCount == 24)
    }

    /// HTTP/2 clients split a `Cookie` field into a field per cookie (RFC 9113 §8.2.3). The
    /// signature covers the one `Cookie` the client signed; the gateway joins the split lines with
    /// `; ` as the client wrote them, and the upstream receives that same line.
    @Test func aSignatureOverCookiesHoldsWhenHTTP2SplitsThem() async throws {
        let (harness, ca) = try await Self.gateway {
            $0.routes.insert(.init(prefix: "/echo/signed", access: .verified), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let url = harness.base + "/echo/signed"
        let message = try HTTPMessage.request(
            method: "POST", uri: url, fields: [("Content-Type", "application/json"), ("Cookie", "session=abc; theme=dark")],
            body: Array("{}".utf8))
        let signed = try Self.bank.sign(
            message, components: [.method, .targetURI, .contentDigest, "content-type", "cookie"], created: Date(),
            nonce: Nonce.random())
        let lines = signed.fields.lines.filter { !["content-length", "cookie"].contains($0.name.lowercased()) }
            .map { [$0.name, $0.value] }
        let file = harness.folder.appendingPathComponent("cookies.json")
        try JSONSerialization.data(withJSONObject: [
            [
                "method": "POST", "url": url, "body_b64": Base64.encode(signed.body),
                "headers": lines + [["cookie", "session=abc"], ["cookie", "theme=dark"]],
            ]
        ]).write(to: file)
        let answer = try #require(try Self.answers(try await PythonPeer.run("http2_peer.py", ["send", ca, file.path])).first)
        #expect(answer["status"] as? Int == 200 && answer["http_version"] as? String == "HTTP/2", "\(answer)")
        let echo = try JSONDecoder().decode(ScoresBackend.Echo.self, from: Data(try #require(answer["body"] as? String).utf8))
        #expect(echo.headers["cookie"] == "session=abc; theme=dark", "\(echo.headers)")
    }

    static func answers(_ output: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]])
    }

    static func object(_ output: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    /// The limits a connection advertises, and what happens past them: more streams than allowed
    /// are refused, a Rapid Reset flood ends the connection, an oversized header list is refused —
    /// and the gateway serves the next connection as before.
    @Test func theLimitsOfAConnectionHoldAgainstTheAttacksOnHTTP2() async throws {
        let (harness, ca) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let port = "\(harness.port)"

        let settings = try Self.object(try await PythonPeer.run("http2_peer.py", ["settings", "127.0.0.1", port, ca]))
        #expect(settings["alpn"] as? String == "h2")
        #expect(settings["max_concurrent_streams"] as? Int == 100)
        #expect(settings["max_header_list_size"] as? Int == 16384)

        // 150 streams opened at once, ignoring the limit of 100: a protocol error (RFC 9113
        // §5.1.2), and SwiftNIO ends the whole connection for it (GOAWAY PROTOCOL_ERROR).
        let streams = try Self.object(try await PythonPeer.run("http2_peer.py", ["streams", "127.0.0.1", port, ca, "/scores/top", "150"]))
        #expect(streams["goaway"] as? Bool == true && streams["error_code"] as? Int == 1, "\(streams)")
        #expect(streams["answered"] as? Int ?? 0 <= 100, "\(streams)")
        // Within the limit, 100 at once are all answered.
        let within = try Self.object(try await PythonPeer.run("http2_peer.py", ["streams", "127.0.0.1", port, ca, "/scores/top", "100"]))
        #expect(within["answered"] as? Int == 100 && within["goaway"] as? Bool == false, "\(within)")

        // CVE-2023-44487: 1,000 streams each reset at once. The connection is ended with GOAWAY
        // (ENHANCE_YOUR_CALM) long before the flood is through, and few requests were ever answered.
        let reset = try Self.object(try await PythonPeer.run("http2_peer.py", ["rapid-reset", "127.0.0.1", port, ca, "/scores/top", "1000"]))
        #expect(reset["goaway"] as? Bool == true && reset["error_code"] as? Int == 0xB, "\(reset)")

        // A header list over 16 KiB never reaches the router or the upstream: the connection ends.
        let before = harness.backend.receivedCount
        let big = try Self.object(try await PythonPeer.run("http2_peer.py", ["big-headers", "127.0.0.1", port, ca, "/scores/top", "40000"]))
        #expect(big["status"] as? Int != 200, "\(big)")
        #expect(harness.backend.receivedCount == before)

        // Still serving.
        #expect(try await Self.curl(["--cacert", ca, "--http2", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", harness.base + "/scores/top"]) == "2 200")
    }

    /// One HTTP/2 connection carries up to 100 requests at once: the connection limit per client
    /// is a limit of its requests in progress too, so one connection cannot hold 100 bodies open
    /// where `maxConnectionsPerClient` allows 2.
    @Test func aClientsRequestsInProgressAreBoundedAcrossItsStreams() async throws {
        let (harness, ca) = try await Self.gateway { $0.maxConnectionsPerClient = 2 }
        Cleanup.after { try await harness.stop() }
        let held = try Self.object(try await PythonPeer.run("http2_peer.py", ["held", "127.0.0.1", "\(harness.port)", ca, "/echo/held", "5"]))
        // Two wait for their bodies; the three past the limit are refused at once.
        #expect(held["answers"] as? [String] == Array(repeating: "429 connection_limit", count: 3), "\(held)")
    }

    /// A request stays in progress until its answer is written: streams whose reader never opens
    /// its window each hold a large answer, and with it a connection to the upstream, so past the
    /// limit the client's next streams are refused, not given more of the upstream's connections.
    @Test func anAnswerNobodyReadsHoldsItsPlace() async throws {
        let (harness, ca) = try await Self.gateway {
            $0.maxConnectionsPerClient = 2
            $0.routes.insert(.init(prefix: "/large", access: .open), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let unread = try Self.object(
            try await PythonPeer.run("http2_peer.py", ["unread", "127.0.0.1", "\(harness.port)", ca, "/large/4194304", "2", "3"]))
        // Two answers' heads come and their bodies never can; the three asked for after are refused.
        #expect(unread["statuses"] as? [Int] == [200, 200, 429, 429, 429], "\(unread)")
        // None of them ended early: a reset stream would have given its place back.
        #expect((unread["resets"] as? [Any])?.isEmpty == true && unread["goaway"] is NSNull, "\(unread)")
        // Those streams gone with their connection, the client's places are free again.
        var status = ""
        for _ in 0..<50 where status != "2 200" {
            status = try await Self.curl(["--cacert", ca, "--http2", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", harness.base + "/large/1000"])
            if status != "2 200" { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(status == "2 200")
    }

    /// An HTTP/2 body need not announce its length: a POST to a signature route is still judged
    /// from its head, refused before a byte of its body has come.
    @Test func anUnsignedPostIsRefusedFromItsHeadWithoutALength() async throws {
        let (harness, ca) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let held = try Self.object(
            try await PythonPeer.run("http2_peer.py", ["held", "127.0.0.1", "\(harness.port)", ca, "/scores", "1", "unannounced"]))
        #expect(held["answers"] as? [String] == ["401 signature_missing"], "\(held)")
    }

    /// A stream whose body does not come within the request timeout is answered `408
    /// request_too_slow`, as an HTTP/1.1 request is — time is judged per stream — and its
    /// connection stays open for the client's other streams.
    @Test func aStreamWhoseBodyNeverComesIsAnsweredInTime() async throws {
        let (harness, ca) = try await Self.gateway { $0.requestTimeoutSeconds = 1 }
        Cleanup.after { try await harness.stop() }
        let held = try Self.object(
            try await PythonPeer.run("http2_peer.py", ["held", "127.0.0.1", "\(harness.port)", ca, "/echo/slow", "1", "announced", "4"]))
        #expect(held["answers"] as? [String] == ["408 request_too_slow"], "\(held)")
        #expect(held["closed"] as? Bool == false, "\(held)")
    }
}
