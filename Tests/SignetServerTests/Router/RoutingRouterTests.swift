// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import NIOHTTP1
import SignetCore
import SignetMiddleware
@testable import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// Routing, seen from the upstream and without a socket: paths that mean something else to the
/// upstream, a trie that must answer as the route table does, keys that need no private key,
/// smuggled identity and forwarding fields, the seeds' query scheme. Each was a defect once (issue
/// 9); each keeps its reason code. (What only a socket shows — the HTTP parser's refusals,
/// upstreams that reset or answer early — is in GatewayHardeningTests.)
@Suite(.awaitsCleanups) struct RoutingRouterTests {
    static let routes: [GatewayConfiguration.Route] = [
        .init(prefix: "/public", access: .open),
        .init(prefix: "/transfers", access: .deviceKey),
        .init(prefix: "/", access: .verified),
    ]

    /// A router harness whose upstream answers `200` to everything and records it.
    static func gateway(adjust: @escaping (inout GatewayConfiguration) -> Void = { _ in }) async throws -> (GatewayHarness, RecordingUpstream) {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) {
            $0.routes = routes
            adjust(&$0)
        }
        let upstream = try #require(harness.upstream)
        upstream.answerEveryRequest(.respond(status: .ok, fields: [("Content-Type", "text/plain")], body: Array("ok".utf8)))
        return (harness, upstream)
    }

    static let bank = MessageSigner(key: try! SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())

    /// Only the methods the gateway proxies are proxied: `TRACE`, WebDAV's and made-up ones are
    /// `404 not_found` on an open route as on a signed one, and never reach the upstream. Paths of
    /// the gateway's own that do not exist are `404` too, even where `/` is open; a path that only
    /// starts like one (`/signetx`) is the upstream's.
    @Test func methodsAndOwnPathsTheGatewayDoesNotServeAreNotFound() async throws {
        let (harness, upstream) = try await Self.gateway {
            $0.routes = [.init(prefix: "/items", access: .verified), .init(prefix: "/", access: .open)]
        }
        Cleanup.after { try await harness.stop() }
        for method in ["TRACE", "PROPFIND", "MKCOL", "FOO"] {
            for target in ["/public/x", "/items"] {
                let answer = try await harness.sendAsWritten(method, target)
                #expect(answer.status == 404 && answer.reason == "not_found", "\(method) \(target): \(answer.status)")
            }
        }
        for target in ["/signet", "/signet/v1/nope", "/SIGNET/x", "/healthz/x", "/metrics/x", "/signet/v1/devices/a/b"] {
            let answer = try await harness.sendAsWritten("GET", target)
            #expect(answer.status == 404 && answer.reason == "not_found", "\(target): \(answer.status)")
        }
        #expect(upstream.received.isEmpty)
        #expect(try await harness.sendAsWritten("GET", "/signetx").status == 200)
        #expect(upstream.received.map(\.target) == ["/signetx"])
    }

    /// A route's `methods` decide per method, `HEAD` following `GET`: a route open for `GET` serves
    /// `HEAD` (forwarded as `HEAD`), and leaves every other method — `OPTIONS` too — to the route
    /// above it, here one that asks for a signature.
    @Test func aRouteOpenForGetServesHeadAndLeavesOtherMethodsToTheRouteAbove() async throws {
        let (harness, upstream) = try await Self.gateway {
            $0.routes = [.init(prefix: "/reports", methods: ["GET"], access: .open), .init(prefix: "/", access: .verified)]
        }
        Cleanup.after { try await harness.stop() }
        #expect(try await harness.sendAsWritten("GET", "/reports/1").status == 200)
        #expect(try await harness.sendAsWritten("HEAD", "/reports/1").status == 200)
        for method in ["OPTIONS", "POST", "DELETE"] {
            let answer = try await harness.sendAsWritten(method, "/reports/1", body: method == "POST" ? [] : nil)
            #expect(answer.status == 401 && answer.reason == "signature_missing", "\(method): \(answer.status) \(answer.text)")
        }
        #expect(upstream.received.map(\.method.rawValue) == ["GET", "HEAD"])
    }

    /// Every path Signet serves itself, asked with a method it does not take, answers `405
    /// method_not_allowed` with `Allow` naming exactly what the published contract says it takes
    /// (and `HEAD` with `GET`); it is never the upstream's to answer, and a path whose feature is
    /// not configured is not there for any method.
    @Test func everyOwnPathAnswersAMethodItDoesNotTakeWith405AndAllow() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        let (harness, upstream) = try await Self.gateway {
            $0.passwords = .init(realm: "signet-bank")
            $0.tokens = .init(issuer: "https://signet.test", audience: ["scores"], keyFile: folder.appendingPathComponent("tokens.pem").path)
            $0.allowDebugDevices = true
        }
        Cleanup.after { try await harness.stop() }
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var contract = paths.mapValues { Set($0.keys.map { $0.uppercased() }).intersection(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) }
        contract["/healthz"] = ["GET"]
        contract["/readyz"] = ["GET"]
        contract["/metrics"] = ["GET"]
        let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]
        var served: Set<String> = []
        for (path, documented) in contract.sorted(by: { $0.key < $1.key }) {
            let target = path.replacingOccurrences(of: "{id}", with: "dev_nobody").replacingOccurrences(of: "{name}", with: "nobody")
            let taken = documented.contains("GET") ? documented.union(["HEAD"]) : documented
            var answers: [String: GatewayHarness.Answer] = [:]
            for method in methods where !taken.contains(method) {
                answers[method] = try await harness.sendAsWritten(method, target, fields: [("Authorization", "Bearer \(GatewayHarness.adminToken)")])
            }
            if answers.values.allSatisfy({ $0.status == 404 && $0.reason == "not_found" }) { continue }
            served.insert(path)
            if documented.contains("GET") {
                // HEAD is served wherever GET is, as GET answers it, without a body.
                let auth = [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
                let get = try await harness.sendAsWritten("GET", target, fields: auth)
                let head = try await harness.sendAsWritten("HEAD", target, fields: auth)
                #expect(head.status == get.status && head.body.isEmpty, "HEAD \(path): \(head.status), GET \(get.status)")
            }
            for (method, answer) in answers {
                #expect(answer.status == 405 && answer.reason == "method_not_allowed", "\(method) \(path): \(answer.status) \(answer.text)")
                let allow = Set((answer.headers.first(name: "Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                #expect(allow == taken, "\(method) \(path): Allow \(allow.sorted()), the contract \(taken.sorted())")
            }
        }
        // TRACE is no method of the gateway's, on its own paths as on proxied ones.
        for target in ["/healthz", "/signet/v1/challenges", "/public/x"] {
            let trace = try await harness.sendAsWritten("TRACE", target)
            #expect(trace.status == 404 && trace.reason == "not_found", "TRACE \(target): \(trace.status)")
        }
        #expect(upstream.received.isEmpty)
        let configured: Set<String> = [
            "/signet/v1/challenges", "/signet/v1/devices", "/signet/v1/devices/attest", "/signet/v1/devices/android",
            "/signet/v1/devices/debug", "/signet/v1/devices/{id}", "/signet/v1/pin-reports", "/signet/v1/tokens", "/signet/v1/jwks",
            "/signet/v1/users/{name}", "/signet/v1/openapi.json", "/healthz", "/readyz", "/metrics",
        ]
        #expect(served == configured, "served: \(served.sorted())")
    }

    @Test(arguments: [
        "/public/../api/items", "/public/%2e%2e/api/items", "/public/%2E%2E/transfers/1", "/public/.%2e/api",
        "/public/x/../../api", "/public/..",
    ])
    func dotSegmentsCannotWalkPastTheRouteTable(_ target: String) async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let answer = try await harness.sendAsWritten("GET", target)
        #expect(answer.status == 401 && answer.reason == "signature_missing", "\(answer.text)")
        #expect(upstream.received.isEmpty)
    }

    @Test(arguments: [
        "/public/%2F../api", "/public/..%2fapi", "/public/%5c..%5capi", "/public\\..\\api", "/public/%00",
        "/public//api", "/public/..;/api", "/public;jsessionid=1", "/public/%zz", "/public/%2",
        "/transfers#", "/public/..#", "/public/x?y#z", "/public/a\"b", "/public/a<b", "/public/{x}", "/public/a|b",
        "/public/a^b", "/public/a`b", "/public/[x]",
    ])
    func ambiguousPathsAreRefused(_ target: String) async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let answer = try await harness.sendAsWritten("GET", target)
        #expect(answer.status == 400 && answer.reason == "path_ambiguous", "\(answer.text)")
        #expect(answer.headers.first(name: "Content-Type") == "application/problem+json")
        #expect(upstream.received.isEmpty)
    }

    @Test func theUpstreamGetsTheNormalisedPathAndTheSignatureCoversTheSentOne() async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        var answer = try await harness.sendAsWritten("GET", "/public/./a/../b%7e?q=%2e%2e")
        #expect(answer.status == 200, "\(answer.text)")
        #expect(upstream.received.last?.target == "/public/b~?q=%2e%2e")

        // A shared-secret client escaping into the device-key route is refused there, and its
        // nonce is not spent (authorisation comes before the claim).
        let escape = try HTTPMessage.request(
            method: "POST",
            uri: harness.base + "/public/../transfers/1",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"amount\":100}".utf8)
        )
        answer = try await GatewayHarness.send(try Self.bank.sign(escape, created: Date(), nonce: "escape-nonce"))
        #expect(answer.status == 403 && answer.reason == "trust_level_insufficient", "\(answer.text)")
        let unspent = try await harness.store.claim(keyID: "bank-v1", nonce: "escape-nonce", until: Date() + 60, now: Date())
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
        answer = try await GatewayHarness.send(signed)
        #expect(answer.status == 200, "\(answer.text)")
        #expect(upstream.received.last?.target == "/transfers/1")
        #expect(upstream.received.last?.fields["Signet-Trust-Level"] == ["device-key"])
    }

    /// Hummingbird's trie, built from the table, answers as the table does for every path around
    /// the configured prefixes (nested prefixes, method sets, siblings, trailing slashes, case).
    @Test func theRouterAnswersAsTheRouteTableDoes() async throws {
        let routes: [GatewayConfiguration.Route] = [
            .init(prefix: "/a", access: .deviceKey),
            .init(prefix: "/a/b", access: .open),
            .init(prefix: "/x/y/z", methods: ["GET"], access: .open),
            .init(prefix: "/m/", access: .open),
        ]
        let (harness, _) = try await Self.gateway { $0.routes = routes }
        Cleanup.after { try await harness.stop() }
        let table = try RouteTableProbe.make(routes)
        let paths = [
            "/", "/q", "/a", "/a/", "/a/b", "/a/b/", "/a/bc", "/a/b/c", "/a/c", "/ab", "/x", "/x/y", "/x/y/z",
            "/x/y/z/w", "/x/y/q", "/x/q", "/m", "/m/", "/m/n", "/mm", "/a/b?x=1", "/A", "/A/B", "/a/B/c", "/X/y/Z",
            "/M/n",
        ]
        for method in ["GET", "POST", "DELETE"] {
            for path in paths {
                let answer = try await harness.sendAsWritten(method, path, fields: [("Content-Length", "0")])
                let expected = table(method, path) == "open" ? 200 : 401
                #expect(answer.status == expected, "\(method) \(path): table says \(table(method, path))")
            }
        }
    }

    @Test func registrationRefusesSmallOrderEd25519Keys() async throws {
        let harness = try await GatewayHarness.start(store: .memory, transport: .router)
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

    @Test func identityAndForwardingFieldsCannotBeSmuggledInAnySpelling() async throws {
        let (harness, upstream) = try await Self.gateway()
        Cleanup.after { try await harness.stop() }
        let smuggled = [
            ("Signet_Key_Id", "evil"), ("SIGNET-DEVICE", "dev_evil"), ("signet_trust_level", "client-certificate"),
            ("Signet-Anything", "x"), ("X-Forwarded-For", "6.6.6.6"), ("X_Forwarded_For", "6.6.6.6"),
            ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "evil.example"), ("Forwarded", "for=6.6.6.6;proto=https"),
            ("X-Real-IP", "6.6.6.6"), ("Connection", "X-Drop-Me"), ("X-Drop-Me", "secret"), ("X-Keep", "kept"),
        ]
        let answer = try await harness.sendAsWritten("GET", "/public/x", fields: smuggled)
        #expect(answer.status == 200, "\(answer.text)")
        let seen = try #require(upstream.received.last).fields
        let names = seen.all.map { $0.name.canonicalName.replacingOccurrences(of: "_", with: "-") }
        #expect(!names.contains { $0.hasPrefix("signet-") }, "\(names)")
        #expect(seen["X-Forwarded-For"] == ["127.0.0.1"])
        #expect(seen["X-Forwarded-Proto"] == ["http"])
        #expect(seen["X-Forwarded-Host"] == [harness.authority])
        #expect(seen["Forwarded"] == ["for=127.0.0.1;proto=http;host=\"\(harness.authority)\""])
        #expect(seen["X-Real-IP"].isEmpty && seen["X_Forwarded_For"].isEmpty)
        #expect(seen["X-Drop-Me"].isEmpty)
        #expect(seen["X-Keep"] == ["kept"])

        // Fields that make frameworks read another client address, method or URL.
        let redirecting = [
            ("X-Client-IP", "6.6.6.6"), ("True-Client-IP", "6.6.6.6"), ("CF-Connecting-IP", "6.6.6.6"), ("Client-IP", "6.6.6.6"),
            ("X-Cluster-Client-IP", "6.6.6.6"), ("Fastly-Client-IP", "6.6.6.6"), ("X-Forwarded", "for=6.6.6.6"),
            ("X-HTTP-Method-Override", "DELETE"), ("X_HTTP_Method", "DELETE"), ("X-Method-Override", "DELETE"),
            ("X-Original-URL", "/transfers/1"), ("X-Rewrite-URL", "/transfers/1"),
            ("Front-End-Https", "on"), ("X-Original-Uri", "/transfers/1"), ("X-Host", "evil.example"),
        ]
        #expect(try await harness.sendAsWritten("GET", "/public/y", fields: redirecting).status == 200)
        let leaked = try #require(upstream.received.last).fields.all.map(\.name.canonicalName).filter {
            $0.contains("client-ip") || $0.contains("override") || $0.contains("method") || $0.contains("url")
                || $0 == "x-forwarded" || $0.contains("connecting") || $0 == "front-end-https" || $0 == "x-original-uri"
                || $0 == "x-host"
        }
        #expect(leaked.isEmpty, "\(leaked)")

        // A Host that could break out of the Forwarded parameter is not repeated upstream.
        #expect(try await harness.sendAsWritten("GET", "/public/z", authority: "a;for=127.0.0.1").status == 200)
        let badHost = try #require(upstream.received.last).fields
        #expect(badHost["X-Forwarded-Host"].isEmpty)
        #expect(badHost["Forwarded"] == ["for=127.0.0.1;proto=http"])

        // A verified client gets exactly the gateway's identity fields.
        let device = try await harness.register(.p256)
        var request = try HTTPMessage.request(method: "GET", uri: harness.base + "/items")
        request.fields.append(name: "Signet_Device", value: "dev_evil")
        #expect(try await GatewayHarness.send(try device.signer.sign(request, created: Date(), nonce: Nonce.random())).status == 200)
        let last = try #require(upstream.received.last).fields
        #expect(last["Signet-Device"] == [device.deviceID])
        #expect(last["Signet-Key-Id"] == [device.keyID])
        #expect(last.all.filter { $0.name.canonicalName.hasPrefix("signet") }.count == 3)

        // An uncovered `_` twin of a covered field: CGI-style servers would read it in its place.
        var amount = try HTTPMessage.request(
            method: "POST",
            uri: harness.base + "/items",
            fields: [("Content-Type", "application/json"), ("X-Amount", "1")],
            body: Array("{}".utf8)
        )
        amount = try device.signer.sign(
            amount,
            components: [.method, .targetURI, .contentDigest, "content-type", "x-amount"],
            created: Date(),
            nonce: Nonce.random()
        )
        amount.fields.append(name: "X_Amount", value: "1000")
        #expect(try await GatewayHarness.send(amount).status == 200)
        let afterTwin = try #require(upstream.received.last).fields
        #expect(afterTwin["X-Amount"] == ["1"])
        #expect(afterTwin.all.allSatisfy { !$0.name.canonicalName.contains("_") }, "\(afterTwin.all)")
    }

    /// The legacy scheme: the upstream gets the query rebuilt from what verified, so a second `msg`
    /// spelled another way (`ms%67`, PHP reads it as `msg` and takes the last) never reaches it.
    @Test func theLegacySchemeForwardsOnlyWhatVerified() async throws {
        let (harness, upstream) = try await Self.gateway {
            $0.routes = [.init(prefix: "/legacy", access: .legacyQueryHMAC(keyId: "highscore-legacy"))]
        }
        Cleanup.after { try await harness.stop() }
        let valid = LegacyQueryHMAC(key: GatewayHarness.legacySecret).query(for: "{\"score\":90}")
        var answer = try await harness.sendAsWritten("GET", "/legacy/score?" + valid + "&extra=1")
        #expect(answer.status == 200, "\(answer.text)")
        #expect(upstream.received.last?.target == "/legacy/score?" + valid)
        for smuggled in ["?" + valid + "&ms%67=999999", "?ms%67=999999&" + valid, "?x=1;msg=999999&" + valid] {
            answer = try await harness.sendAsWritten("GET", "/legacy/score" + smuggled)
            #expect(answer.status == 400 && answer.reason == "malformed_header", "\(smuggled): \(answer.text)")
        }
        #expect(upstream.received.count == 1)
    }

    /// The seeds' query scheme tells the upstream whose secret verified it: `Signet-Key-Id` is the
    /// route's key id, at trust level `shared-secret`, whatever the client wrote.
    @Test func theLegacyQuerySchemeNamesItsKeyToTheUpstream() async throws {
        let (harness, upstream) = try await Self.gateway {
            $0.routes = [.init(prefix: "/legacy/score", access: .legacyQueryHMAC(keyId: "highscore-legacy")), .init(prefix: "/", access: .verified)]
        }
        Cleanup.after { try await harness.stop() }
        let query = LegacyQueryHMAC(key: GatewayHarness.legacySecret).query(for: "{\"score\":90}")
        let answer = try await harness.sendAsWritten("GET", "/legacy/score?" + query, fields: [("Signet-Key-Id", "bank-v1"), ("Signet-Trust-Level", "app-attest")])
        #expect(answer.status == 200, "\(answer.text)")
        let received = try #require(upstream.received.last)
        #expect(received.fields["Signet-Key-Id"] == ["highscore-legacy"] && received.fields["Signet-Trust-Level"] == ["shared-secret"], "\(received.fields.all)")
    }

}
