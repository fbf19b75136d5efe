// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import NIOHTTP1
import PropertyBased
import SignetCore
import SignetServer
import SignetSimulator
import SignetTestSupport
import Testing

/// Issue 41 §1–2: the authorization listener judges requests for another proxy with the routes,
/// gates, nonce store and reason codes of Signet's own proxy — forward auth
/// (`/forward-auth`, the original in `X-Forwarded-*`) and Envoy's HTTP `ext_authz`
/// (`/ext-authz` + the original path) — and never takes a body's digest on trust.
@Suite(.awaitsCleanups) struct ForwardAuthTests {
    static let host = "api.example.test"

    static func gateway() async throws -> GatewayHarness {
        // Over TLS with client certificates, so that `/echo` is a `client-certificate` route.
        try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) {
            $0.authorizationListener = .init(listen: .init(host: "127.0.0.1", port: 0))
            $0.routes.insert(.init(prefix: "/watched", access: .verified, mode: .monitor), at: 0)
            // A DPoP route keeps its token and proof from the upstream: only Signet's proxy can.
            $0.tokens = .init(issuer: "https://gateway.example.com", audience: ["scores"], keyFile: FileManager.default.temporaryDirectory.appendingPathComponent("signet-fa-tokens-\(UUID().uuidString).pem").path)
            $0.routes.insert(.init(prefix: "/bound", access: .init(mode: "app-token", options: ["dpop": .bool(true)])), at: 0)
        }
    }

    static let bank = { try! MessageSigner(key: SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256()) }()

    /// A request the client signed for `https://api.example.test`.
    static func signed(_ method: String, _ target: String, body: [UInt8]? = nil, signer: MessageSigner = bank, scheme: String = "https") throws -> HTTPMessage {
        let fields: MessageFields = body == nil ? [] : [("Content-Type", "application/json")]
        let request = try HTTPMessage.request(method: method, uri: "\(scheme)://\(host)\(target)", fields: fields, body: body ?? [])
        return try signer.sign(request, created: Date(), nonce: Nonce.random())
    }

    /// The client's fields as a proxy passes them on, less what it writes itself.
    static func clientFields(_ message: HTTPMessage) -> [(String, String)] {
        message.fields.lines.filter { !["host", "content-length"].contains($0.name.lowercased()) }.map { ($0.name, $0.value) }
    }

    /// Asks as Caddy's `forward_auth` does: `GET /forward-auth`, the original in `X-Forwarded-*`.
    static func forwardAuth(
        _ harness: GatewayHarness,
        _ message: HTTPMessage?,
        method: String = "GET",
        target: String = "/scores/1",
        extra: [(String, String)] = [],
        body: [UInt8]? = nil
    ) async throws -> GatewayHarness.Answer {
        let port = try #require(harness.gateways[0].authorizationPort)
        var fields = message.map(clientFields) ?? []
        fields += [
            ("X-Forwarded-Method", message?.method ?? method), ("X-Forwarded-Uri", message?.target.map { $0.path + ($0.query.map { "?" + $0 } ?? "") } ?? target),
            ("X-Forwarded-Host", host), ("X-Forwarded-Proto", "https"), ("X-Forwarded-For", "203.0.113.9"),
        ]
        return try await GatewayHarness.send(
            method: body == nil ? "GET" : "POST", url: "http://127.0.0.1:\(port)/forward-auth", headers: fields + extra, body: body)
    }

    @Test func forwardAuthAnswersAsTheProxyWould() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }

        // A signed GET: 200, with the identity fields to copy upstream.
        let get = try Self.signed("GET", "/scores/1?page=2")
        let accepted = try await Self.forwardAuth(harness, get)
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect(accepted.headers["Signet-Key-Id"] == ["bank-v1"])
        #expect(accepted.headers["Signet-Trust-Level"] == ["shared-secret"])

        // The same again: its nonce was claimed.
        let replayed = try await Self.forwardAuth(harness, get)
        #expect(replayed.status == 401 && replayed.reason == "nonce_replayed")
        #expect(replayed.headers["Signet-Reason"] == ["nonce_replayed"], "the code where nginx can read it")
        #expect(replayed.headers["Signet-Key-Id"].isEmpty, "no identity on a refusal")

        // Unsigned, an unknown key, another target than the one signed.
        let unsigned = try await Self.forwardAuth(harness, nil, method: "GET", target: "/scores/1")
        #expect(unsigned.status == 401 && unsigned.reason == "signature_missing")
        let stranger = try MessageSigner(key: SigningKey(secret: Array(repeating: 7, count: 32)), keyID: "nobody", algorithm: HMACSHA256())
        let unknown = try await Self.forwardAuth(harness, try Self.signed("GET", "/scores/1", signer: stranger))
        #expect(unknown.status == 401 && unknown.reason == "unknown_key")
        var moved = Self.clientFields(try Self.signed("GET", "/scores/1"))
        moved += [("X-Forwarded-Method", "GET"), ("X-Forwarded-Uri", "/scores/2"), ("X-Forwarded-Host", Self.host)]
        let port = try #require(harness.gateways[0].authorizationPort)
        let elsewhere = try await GatewayHarness.send(method: "GET", url: "http://127.0.0.1:\(port)/forward-auth", headers: moved)
        #expect(elsewhere.status == 401 && elsewhere.reason == "signature_invalid", "\(elsewhere.text)")

        // The open route lets anyone through, with no identity.
        let open = try await Self.forwardAuth(harness, nil, method: "GET", target: "/scores/top")
        // Every identity field is there, empty where none applies (Caddy copies by name).
        #expect(open.status == 200 && open.headers["Signet-Key-Id"] == [""] && open.headers["Signet-Verdict"] == [""])
    }

    /// An App Attest assertion's app build (iOS 27) is judged by the route's policy and reported in
    /// the identity fields, as Signet's own proxy would.
    @Test func theAppBuildIsJudgedAndReportedForAnotherProxy() async throws {
        let harness = try await GatewayHarness.start {
            $0.authorizationListener = .init(listen: .init(host: "127.0.0.1", port: 0))
            $0.routes.insert(.init(prefix: "/store", access: .init(mode: "app-attest", options: ["appCategories": .string("app-store")])), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let device = SimulatedAppAttestDevice(
            appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA, appBuild: AppBuild(category: .appStore, bundleVersion: "42"))
        #expect(try await harness.attest(device).status == 201)
        let signer = SimulatedAppAttestSigner(device: device)
        func ask() async throws -> GatewayHarness.Answer {
            // This gateway serves plain HTTP: its public scheme is `http`.
            let request = try HTTPMessage.request(method: "GET", uri: "http://\(Self.host)/store/1")
            return try await Self.forwardAuth(harness, try signer.sign(request, created: Date(), nonce: Nonce.random()))
        }
        let accepted = try await ask()
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect(accepted.headers["Signet-App-Category"] == ["app-store"] && accepted.headers["Signet-App-Version"] == ["42"])
        device.appBuild = AppBuild(category: .development, bundleVersion: "42")
        let refused = try await ask()
        #expect(refused.status == 403 && refused.headers["Signet-Reason"] == ["app_category_refused"], "\(refused.text)")
        #expect(refused.headers["Signet-App-Category"].isEmpty, "no identity on a refusal")
    }

    @Test func aBodyIsCheckedOrTheRequestRefused() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let body = Array(#"{"name":"ada","score":7}"#.utf8)

        // nginx and Caddy send no body: a signed body cannot be checked, so it is not accepted.
        let post = try Self.signed("POST", "/scores", body: body)
        let withheld = try await Self.forwardAuth(harness, post)
        #expect(withheld.status == 403 && withheld.reason == "body_not_forwarded", "\(withheld.text)")
        // Announced by the proxy alone (no digest), the same.
        let announced = try await Self.forwardAuth(harness, nil, method: "POST", target: "/scores", extra: [("X-Original-Content-Length", "25")])
        #expect(announced.status == 403 && announced.reason == "body_not_forwarded")
        // An empty announcement (nginx's `$content_length` of a GET) announces nothing.
        let empty = try await Self.forwardAuth(harness, try Self.signed("GET", "/scores/1"), extra: [("X-Original-Content-Length", "")])
        #expect(empty.status == 200, "\(empty.text)")

        // Traefik's `forwardBody`: the body comes and is checked against the signed digest.
        let forwarded = try await Self.forwardAuth(harness, try Self.signed("POST", "/scores", body: body), body: body)
        #expect(forwarded.status == 200, "\(forwarded.text)")
        var tampered = body
        tampered[tampered.count - 2] = UInt8(ascii: "9")
        let changed = try await Self.forwardAuth(harness, try Self.signed("POST", "/scores", body: body), body: tampered)
        #expect(changed.status == 401 && changed.reason == "digest_mismatch", "\(changed.text)")
    }

    @Test func envoysHTTPServiceAndItsPartialBodies() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let port = try #require(harness.gateways[0].authorizationPort)
        let body = Array(#"{"name":"ada","score":7}"#.utf8)

        // Envoy asks on `path_prefix` + the original path, with the original method and fields.
        let get = try Self.signed("GET", "/scores/1")
        let url = "http://127.0.0.1:\(port)/ext-authz/scores/1"
        let accepted = try await GatewayHarness.send(method: "GET", url: url, headers: Self.clientFields(get) + [("Host", Self.host)])
        #expect(accepted.status == 200 && accepted.headers["Signet-Key-Id"] == ["bank-v1"], "\(accepted.text)")

        // `with_request_body`: the whole body is checked; a cut one (`allow_partial_message`) is not taken.
        let post = try Self.signed("POST", "/scores", body: body)
        let whole = try await GatewayHarness.send(
            method: "POST", url: "http://127.0.0.1:\(port)/ext-authz/scores", headers: Self.clientFields(post) + [("Host", Self.host)], body: body)
        #expect(whole.status == 200, "\(whole.text)")
        let cut = try Self.signed("POST", "/scores", body: body)
        let partial = try await GatewayHarness.send(
            method: "POST", url: "http://127.0.0.1:\(port)/ext-authz/scores",
            headers: Self.clientFields(cut) + [("Host", Self.host), ("x-envoy-auth-partial-body", "true")], body: Array(body.prefix(8)))
        #expect(partial.status == 403 && partial.reason == "body_not_forwarded", "\(partial.text)")
    }

    @Test func whatCannotBeJudgedForAnotherProxy() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let port = try #require(harness.gateways[0].authorizationPort)

        // No original URI: which request is asked about is not said.
        let nameless = try await GatewayHarness.send(
            method: "GET", url: "http://127.0.0.1:\(port)/forward-auth", headers: [("X-Forwarded-Method", "GET"), ("X-Forwarded-Host", Self.host)])
        #expect(nameless.status == 400 && nameless.reason == "authorization_request_invalid")
        // Twice: refused, not read first-wins.
        let twice = try await GatewayHarness.send(
            method: "GET", url: "http://127.0.0.1:\(port)/forward-auth",
            headers: [("X-Forwarded-Uri", "/scores/top"), ("X-Forwarded-Uri", "/admin"), ("X-Forwarded-Host", Self.host)])
        #expect(twice.status == 400 && twice.reason == "authorization_request_invalid")
        // Named both ways: a client's own spelling of one beside the proxy's of the other.
        let both = try await GatewayHarness.send(
            method: "GET", url: "http://127.0.0.1:\(port)/forward-auth",
            headers: [("X-Forwarded-Uri", "/admin"), ("X-Original-URI", "/scores/top"), ("X-Forwarded-Host", Self.host)])
        #expect(both.status == 400 && both.reason == "authorization_request_invalid")
        // A path servers read in different ways; and one that normalises to another, which the
        // proxy would forward as sent: judged as `/scores/top`, an upstream would route `/admin/…`.
        for target in ["/scores/top/..%2F..%2Fadmin", "/admin/x/../../scores/top", "/admin/%2e%2e/scores/top", "/%73cores/top"] {
            let ambiguous = try await Self.forwardAuth(harness, nil, method: "GET", target: target)
            #expect(ambiguous.status == 400 && ambiguous.reason == "path_ambiguous", "\(target): \(ambiguous.text)")
        }
        // A client certificate is checked in Signet's own TLS handshake, which this request never had.
        let certificate = try await Self.forwardAuth(harness, nil, method: "GET", target: "/echo/headers")
        #expect(certificate.status == 501 && certificate.reason == "authorization_unsupported")
        // A legacy query MAC: its gate forwards only `msg` and `hmac`, the proxy the query as sent.
        let legacy = try await Self.forwardAuth(harness, nil, method: "GET", target: "/legacy/score?msg=1&hmac=00&admin=1")
        #expect(legacy.status == 501 && legacy.reason == "authorization_unsupported", "\(legacy.text)")
        let bound = try await Self.forwardAuth(harness, nil, method: "GET", target: "/bound/x")
        #expect(bound.status == 501 && bound.reason == "authorization_unsupported", "\(bound.text)")
        // The proxies' health checks: up, and the store answers.
        let ready = try await GatewayHarness.readiness("http://127.0.0.1:\(port)/readyz")
        #expect(ready.status == 200 && ready.json["store"] as? String == "ok", "\(ready.text)")
        #expect(try await GatewayHarness.send(method: "GET", url: "http://127.0.0.1:\(port)/healthz").status == 200)
        // Anything else on the listener.
        let other = try await GatewayHarness.send(method: "GET", url: "http://127.0.0.1:\(port)/scores/top")
        #expect(other.status == 404 && other.reason == "not_found")
    }

    @Test func monitorRoutesLetThroughWithTheirVerdict() async throws {
        let harness = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let unsigned = try await Self.forwardAuth(harness, nil, method: "GET", target: "/watched/page")
        #expect(unsigned.status == 200 && unsigned.headers["Signet-Verdict"] == ["signature_missing"], "\(unsigned.text)")
        let signed = try Self.signed("GET", "/watched/page")
        let accepted = try await Self.forwardAuth(harness, signed)
        #expect(accepted.status == 200 && accepted.headers["Signet-Verdict"] == ["accepted"])
        #expect(accepted.headers["Signet-Key-Id"] == ["bank-v1"])
        let replayed = try await Self.forwardAuth(harness, signed)
        #expect(replayed.status == 200 && replayed.headers["Signet-Verdict"] == ["nonce_replayed"])
        // After a reload to `enforce`, the same request is refused.
        var configuration = harness.gateway.configuration
        configuration.routes[configuration.routes.firstIndex { $0.prefix == "/watched" }!].mode = .enforce
        try harness.gateways[0].reloader.reload(to: configuration)
        let enforced = try await Self.forwardAuth(harness, nil, method: "GET", target: "/watched/page")
        #expect(enforced.status == 401 && enforced.reason == "signature_missing")
        // The listener itself is made at start: changing it needs a restart.
        var moved = configuration
        moved.authorizationListener?.grpc = .init(host: "127.0.0.1", port: 0)
        let refused = #expect(throws: ConfigurationError.self) { try harness.gateways[0].reloader.reload(to: moved) }
        #expect(refused?.kind == .restartRequired && refused?.path == "authorizationListener", "\(String(describing: refused))")
    }

    /// The invariant across every way a request can be asked about: over random sequences of
    /// fresh, replayed (through any way), tampered and unsigned requests sent through Signet's own
    /// proxy, forward auth with the body (Traefik's `forwardBody`), Envoy's HTTP service and forward
    /// auth without the body (nginx, Caddy), a signature is accepted at most once in all; a body
    /// that did not come is refused before anything is claimed; and each answer is the one the
    /// proxy would give.
    @Test func aNonceIsAcceptedOnceWhicheverWayItCame() async throws {
        let harness = try await GatewayHarness.start(store: .memory) {
            $0.authorizationListener = .init(listen: .init(host: "127.0.0.1", port: 0))
            $0.publicAuthority = Self.host
        }
        Cleanup.after { try await harness.stop() }
        let port = try #require(harness.gateways[0].authorizationPort)
        let body = Array(#"{"name":"ada","score":7}"#.utf8)
        // Each step: the way (step / 4) and the kind of request (step % 4).
        await propertyCheck(count: 25, input: Gen.int(in: 0...15).array(of: 1...10)) { steps in
            let forwardedBefore = harness.backend.receivedCount
            var signed: [HTTPMessage] = []
            var claimed: Set<Int> = []
            var forwarded = 0
            for step in steps {
                let (way, kind) = (step / 4, step % 4)
                // What is sent, and which signed request (by index) it carries.
                let message: HTTPMessage
                var index: Int?
                var sent = body
                switch kind {
                case 0:
                    message = try! Self.signed("POST", "/scores", body: body, signer: Self.bank, scheme: "http")
                    signed.append(message)
                    index = signed.count - 1
                case 1 where !signed.isEmpty:
                    index = Int.random(in: 0..<signed.count)
                    message = signed[index!]
                case 2:
                    message = try! Self.signed("POST", "/scores", body: body, signer: Self.bank, scheme: "http")
                    sent[sent.count - 2] = UInt8(ascii: "9")
                default:
                    message = try! HTTPMessage.request(method: "POST", uri: "http://\(Self.host)/scores", fields: [("Content-Type", "application/json")], body: body)
                }
                let expected: String
                if way == 3, message.fields["Content-Digest"] != nil {
                    expected = "body_not_forwarded"
                } else if kind == 2 {
                    expected = "digest_mismatch"
                } else if message.fields["Signature"] == nil {
                    expected = "signature_missing"
                } else if claimed.insert(index!).inserted {
                    expected = "accepted"
                } else {
                    expected = "nonce_replayed"
                }
                let fields = Self.clientFields(message)
                let answer: GatewayHarness.Answer
                switch way {
                case 0:
                    answer = try! await GatewayHarness.send(method: "POST", url: harness.base + "/scores", headers: fields, body: sent)
                    if answer.status == 201 { forwarded += 1 }
                case 1, 3:
                    let asking = fields + [("X-Forwarded-Method", "POST"), ("X-Forwarded-Uri", "/scores"), ("X-Forwarded-Host", Self.host)]
                    answer = try! await GatewayHarness.send(
                        method: way == 1 ? "POST" : "GET", url: "http://127.0.0.1:\(port)/forward-auth", headers: asking, body: way == 1 ? sent : nil)
                default:
                    answer = try! await GatewayHarness.send(method: "POST", url: "http://127.0.0.1:\(port)/ext-authz/scores", headers: fields, body: sent)
                }
                let verdict = answer.status < 300 ? "accepted" : answer.reason ?? "\(answer.status)"
                #expect(verdict == expected, "\(steps): way \(way), kind \(kind)")
            }
            #expect(harness.backend.receivedCount - forwardedBefore == forwarded, "only what the proxy accepted reached the API")
        }
    }
}

