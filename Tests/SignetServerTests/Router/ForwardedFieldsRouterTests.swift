// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import NIOHTTP1
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// The header fields on each hop, field by field: what a client sends that must stay on its hop
/// (protocol upgrades, proxy credentials), what the upstream answers that must stay on its own, the
/// forwarding fields the upstream is told (from the configuration, never the client's `Host`), the
/// framing it gets, and why a signature may not cover a field the upstream would never receive.
@Suite(.awaitsCleanups) struct ForwardedFieldsRouterTests {
    static let bank = MessageSigner(key: try! SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())

    static func start(adjust: @escaping (inout GatewayConfiguration) -> Void = { _ in }) async throws -> (GatewayHarness, RecordingUpstream) {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) {
            $0.routes = [.init(prefix: "/public", access: .open), .init(prefix: "/", access: .verified)]
            adjust(&$0)
        }
        let upstream = try #require(harness.upstream)
        upstream.answerEveryRequest(.respond(status: .ok, fields: [], body: []))
        return (harness, upstream)
    }

    /// `pairs` as message fields.
    static func fields(_ pairs: [(String, String)]) -> MessageFields {
        MessageFields(pairs.map { MessageFields.Field(name: $0.0, value: $0.1) })
    }

    /// The message's fields as a test client writes them, less `Host` (the harness sends the authority).
    static func pairs(_ message: HTTPMessage) -> [(String, String)] {
        message.fields.lines.filter { $0.name.lowercased() != "host" }.map { ($0.name, $0.value) }
    }

    /// What a client may send only to its own hop: an h2c upgrade, proxy credentials, transfer
    /// codings it accepts, `Expect` (answered by the gateway). None reaches the upstream, on an open
    /// route or a signed one, and the request itself goes through.
    @Test func aClientsHopByHopFieldsNeverReachTheUpstream() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let hop: [(String, String)] = [
            ("Upgrade", "h2c"), ("Connection", "Upgrade, HTTP2-Settings"), ("HTTP2-Settings", "AAMAAABkAAQAAP__"),
            ("Proxy-Authorization", "Basic cHJveHk6c2VjcmV0"), ("TE", "trailers"), ("Keep-Alive", "timeout=5"),
            ("Trailer", "X-Checksum"), ("Proxy-Connection", "keep-alive"), ("Expect", "100-continue"),
        ]
        let removed = ["Upgrade", "Connection", "HTTP2-Settings", "Proxy-Authorization", "TE", "Keep-Alive", "Trailer", "Proxy-Connection", "Expect"]
        let open = try await harness.sendAsWritten("POST", "/public/x", fields: hop + [("Content-Type", "text/plain")], body: Array("hi".utf8))
        let signed = try Self.bank.sign(
            try HTTPMessage.request(method: "GET", uri: harness.base + "/items", fields: Self.fields(hop)),
            created: Date(),
            nonce: Nonce.random()
        )
        let verified = try await harness.sendAsWritten("GET", "/items", fields: Self.pairs(signed))
        #expect(open.status == 200 && verified.status == 200, "\(open.text) \(verified.text)")
        try #require(upstream.received.count == 2)
        for received in upstream.received {
            for name in removed { #expect(received.fields[name].isEmpty, "\(received.target) got \(name)") }
        }
        #expect(upstream.received[0].body == Array("hi".utf8) && upstream.received[0].fields["Content-Length"] == ["2"])
    }

    /// The upstream's hop-by-hop fields, and every field its `Connection` names, stay on its hop:
    /// the client sees none of them, signed or not.
    @Test func anUpstreamsHopByHopFieldsNeverReachTheClient() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let answer: [(String, String)] = [
            ("Keep-Alive", "timeout=5"), ("Proxy-Authenticate", "Basic realm=\"internal\""), ("Upgrade", "h2c"),
            ("Trailer", "X-Checksum"), ("Connection", "X-Internal"), ("X-Internal", "secret"), ("X-Public", "kept"),
        ]
        upstream.answerEveryRequest(.respond(status: .ok, fields: answer, body: Array("ok".utf8)))
        let open = try await harness.sendAsWritten("GET", "/public/x")
        let signed = try await GatewayHarness.send(
            try Self.bank.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/items"), created: Date(), nonce: Nonce.random())
        )
        for response in [open, signed] {
            #expect(response.status == 200 && response.text == "ok")
            for name in ["Keep-Alive", "Proxy-Authenticate", "Upgrade", "Trailer", "Connection", "X-Internal"] {
                #expect(response.headers[name].isEmpty, "the client got \(name)")
            }
            #expect(response.headers["X-Public"] == ["kept"])
        }
        #expect(!signed.headers["Signature"].isEmpty, "and the signed answer is signed over what the client got")
    }

    /// Behind a proxy that terminates TLS, `publicScheme` and `publicAuthority` are what apps
    /// sign and what the upstream is told (`X-Forwarded-Proto`, `X-Forwarded-Host`, `Forwarded`),
    /// whatever `Host` a client writes: a client cannot point the upstream's links elsewhere.
    @Test func theUpstreamIsToldThePublicOriginNeverTheClientsHost() async throws {
        let (harness, upstream) = try await Self.start {
            $0.publicScheme = "https"
            $0.publicAuthority = "api.example.com"
        }
        Cleanup.after { try await harness.stop() }
        let signed = try Self.bank.sign(
            try HTTPMessage.request(method: "GET", uri: "https://api.example.com/items?page=2"),
            created: Date(),
            nonce: Nonce.random()
        )
        let verified = try await harness.sendAsWritten("GET", "/items?page=2", fields: Self.pairs(signed))
        #expect(verified.status == 200, "\(verified.text)")
        // Signed for the gateway's own address instead: not what apps sign here.
        let local = try Self.bank.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/items"), created: Date(), nonce: Nonce.random())
        #expect(try await harness.sendAsWritten("GET", "/items", fields: Self.pairs(local)).reason == "signature_invalid")
        let open = try await harness.sendAsWritten("GET", "/public/x", fields: [("X-Forwarded-Host", "evil.example")], authority: "evil.example")
        #expect(open.status == 200)
        try #require(upstream.received.count == 2)
        for received in upstream.received {
            #expect(received.fields["X-Forwarded-Proto"] == ["https"] && received.fields["X-Forwarded-Host"] == ["api.example.com"], "\(received.fields.all)")
            #expect(received.fields["Forwarded"] == ["for=127.0.0.1;proto=https;host=\"api.example.com\""], "\(received.fields.all)")
            #expect(received.authority == "scores.test", "the upstream's own authority in Host")
        }
    }

    /// A signature may not vouch for a field the upstream never receives as sent — one the gateway
    /// removes (an underscore name a CGI server would read as another field, `Signet-*`, a
    /// forwarding or hop-by-hop field): refused before anything is forwarded. `Host` and
    /// `Content-Length` are written again with what was verified, so covering them passes.
    @Test func aSignatureOverAFieldTheUpstreamWouldNotReceiveIsRefused() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        func send(_ field: (String, String)) async throws -> GatewayHarness.Answer {
            let signed = try Self.bank.sign(
                try HTTPMessage.request(method: "GET", uri: harness.base + "/items", fields: Self.fields([field])),
                components: [.method, .targetURI, ComponentIdentifier(field.0.lowercased())],
                created: Date(),
                nonce: Nonce.random()
            )
            return try await harness.sendAsWritten("GET", "/items", fields: Self.pairs(signed))
        }
        for field in [("X_Amount", "5"), ("Signet-Device", "dev_1"), ("X-Forwarded-For", "10.0.0.1"), ("X-HTTP-Method-Override", "DELETE"), ("TE", "trailers"), ("Expect", "100-continue")] {
            let answer = try await send(field)
            #expect(answer.status == 400 && answer.reason == "malformed_header" && answer.text.contains("removed on the way"), "\(field.0): \(answer.text)")
        }
        #expect(upstream.received.isEmpty)
        #expect(try await send(("X-Amount", "5")).status == 200)
        #expect(upstream.received.first?.fields["X-Amount"] == ["5"])
    }

    /// The framing the upstream gets is the gateway's: no length for a request without a body, `0`
    /// for an empty POST, and the body's true length whatever the client declared.
    @Test func theUpstreamGetsTheGatewaysFramingNotTheClients() async throws {
        let (harness, upstream) = try await Self.start()
        Cleanup.after { try await harness.stop() }
        #expect(try await harness.sendAsWritten("GET", "/public/a").status == 200)
        #expect(try await harness.sendAsWritten("POST", "/public/b", body: []).status == 200)
        #expect(try await harness.sendAsWritten("POST", "/public/c", fields: [("Transfer-Encoding", "chunked")], body: Array("abc".utf8)).status == 200)
        try #require(upstream.received.count == 3)
        #expect(upstream.received[0].fields["Content-Length"].isEmpty && upstream.received[0].fields["Transfer-Encoding"].isEmpty)
        #expect(upstream.received[1].fields["Content-Length"] == ["0"])
        #expect(upstream.received[2].fields["Content-Length"] == ["3"] && upstream.received[2].fields["Transfer-Encoding"].isEmpty)
        #expect(upstream.received[2].body == Array("abc".utf8))
    }

    /// Behind a trusted balancer, an IPv6 client is named in `Forwarded` as RFC 7239 quotes it, and
    /// in `X-Forwarded-For` as it is.
    @Test func anIPv6ClientIsQuotedInForwarded() async throws {
        let (harness, upstream) = try await Self.start { $0.trustedProxies = ["127.0.0.1/32"] }
        Cleanup.after { try await harness.stop() }
        #expect(try await harness.sendAsWritten("GET", "/public/x", fields: [("X-Forwarded-For", "2001:db8::7")]).status == 200)
        let received = try #require(upstream.received.first)
        #expect(received.fields["X-Forwarded-For"] == ["2001:db8::7"], "\(received.fields.all)")
        #expect(received.fields["Forwarded"].first?.hasPrefix("for=\"[2001:db8::7]\";") == true, "\(received.fields.all)")
    }
}
