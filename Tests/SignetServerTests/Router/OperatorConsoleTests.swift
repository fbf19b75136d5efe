// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import SignetCore
import SignetMiddleware
import SignetStore
import SignetTestSupport
import Testing

@testable import SignetServer

/// The operator console over real HTTP: sessions, CSRF, the pages' data, revocation end to end, and
/// what an attacker can put in front of an operator's eyes.
@Suite(.awaitsCleanups) struct OperatorConsoleTests {
    /// A browser without script: keeps the session cookie, follows no redirect.
    final class Browser: @unchecked Sendable {
        let base: String
        var cookie: String?
        var origin: String?
        static let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(redirectConfiguration: .disallow)
        )

        init(base: String) {
            self.base = base
            self.origin = base
        }

        func get(_ path: String) async throws -> GatewayHarness.Answer {
            try await send("GET", path, form: nil)
        }

        func post(_ path: String, _ form: [(String, String)]) async throws -> GatewayHarness.Answer {
            try await send("POST", path, form: form)
        }

        private func send(_ method: String, _ path: String, form: [(String, String)]?) async throws -> GatewayHarness.Answer {
            var headers: [(String, String)] = []
            var body: [UInt8]?
            if let cookie { headers.append(("Cookie", "signet_console=\(cookie)")) }
            if let form {
                if let origin { headers.append(("Origin", origin)) }
                headers.append(("Content-Type", "application/x-www-form-urlencoded"))
                body = Array(form.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&").utf8)
            }
            let answer = try await GatewayHarness.send(method: method, url: base + path, headers: headers, body: body, client: Self.client)
            for value in answer.headers["Set-Cookie"] {
                guard value.hasPrefix("signet_console=") else { continue }
                let pair = value.split(separator: ";")[0].dropFirst("signet_console=".count)
                cookie = pair.isEmpty ? nil : String(pair)
            }
            return answer
        }

        func signIn(_ token: String = GatewayHarness.adminToken) async throws -> GatewayHarness.Answer {
            try await post("/signet/admin/sign-in", [("token", token)])
        }

        /// The form token on the page.
        func csrf() async throws -> String {
            let page = try await get("/signet/admin/overview").text
            guard let range = page.range(of: "name=\"csrf\" value=\"") else { throw HarnessError("no form token") }
            return String(page[range.upperBound...].prefix(while: { $0 != "\"" }))
        }

        static func encode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        }
    }

    /// Writes the console's pending activity now, as the gateway's flush does every second: what
    /// the pages show next is what was sent before, on a loaded machine too.
    static func settle(_ harness: GatewayHarness) async throws {
        _ = try await harness.gateway.activity.flush(to: harness.store)
    }

    @Test func signingInGivesAStrictSessionCookieAndSigningOutEndsIt() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let browser = Browser(base: harness.base)

        for page in ["/signet/admin/", "/signet/admin/overview", "/signet/admin/devices", "/signet/admin/keys"] {
            let answer = try await browser.get(page)
            #expect(answer.status == 303 && answer.headers.first(name: "Location") == "/signet/admin/sign-in", "\(page)")
        }
        var answer = try await browser.signIn("wrong-token")
        #expect(answer.status == 401 && answer.text.contains("admin_unauthorized") && browser.cookie == nil)
        #expect(!answer.text.contains("wrong-token"))
        // A sign-in posted from another site is refused even with the right token.
        browser.origin = "https://evil.example"
        answer = try await browser.signIn()
        #expect(answer.status == 403 && answer.text.contains("csrf_invalid") && browser.cookie == nil)
        browser.origin = harness.base

        answer = try await browser.signIn()
        #expect(answer.status == 303 && answer.headers.first(name: "Location") == "/signet/admin/overview")
        let setCookie = answer.headers.first(name: "Set-Cookie") ?? ""
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/signet/admin/", "Max-Age=28800"] {
            #expect(setCookie.contains(attribute), "\(attribute) in \(setCookie)")
        }
        #expect(!setCookie.contains("Secure"), "plain HTTP: a Secure cookie would never come back")
        let session = try #require(browser.cookie)
        #expect(session.count == 43)

        for page in ["overview", "devices", "refusals", "pin-reports", "keys", "audit"] {
            answer = try await browser.get("/signet/admin/\(page)")
            #expect(answer.status == 200, "\(page)")
            let policy = answer.headers.first(name: "Content-Security-Policy") ?? ""
            #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"), "\(page)")
            #expect(!policy.contains("unsafe-inline") && !policy.contains("script-src"))
            #expect(answer.headers.first(name: "Cache-Control") == "no-store")
            #expect(answer.headers.first(name: "X-Frame-Options") == "DENY")
            #expect(!answer.text.contains("<script") && !answer.text.contains("style="), "\(page)")
        }
        #expect(try await browser.get("/signet/admin/console.css").status == 200)
        let icon = try await browser.get("/signet/admin/icon.svg")
        #expect(icon.status == 200 && icon.headers.first(name: "Content-Type") == "image/svg+xml" && icon.text.hasPrefix("<svg"))

        // Sign-out is a change: it needs the form token.
        answer = try await browser.post("/signet/admin/sign-out", [("csrf", "forged")])
        #expect(answer.status == 403 && answer.text.contains("csrf_invalid"))
        #expect(try await browser.get("/signet/admin/overview").status == 200)
        answer = try await browser.post("/signet/admin/sign-out", [("csrf", try await browser.csrf())])
        #expect(answer.status == 303 && answer.headers.first(name: "Set-Cookie")?.contains("Max-Age=0") == true)
        // The old cookie is dead in the store, not just in this browser.
        browser.cookie = session
        #expect(try await browser.get("/signet/admin/overview").status == 303)

        // A tampered or foreign cookie is no session.
        browser.cookie = String(session.dropLast()) + (session.last == "A" ? "B" : "A")
        #expect(try await browser.get("/signet/admin/overview").status == 303)
        browser.cookie = "x'; DROP TABLE admin_sessions; --"
        #expect(try await browser.get("/signet/admin/overview").status == 303)

        _ = try await browser.signIn()
        let audit = try await browser.get("/signet/admin/audit").text
        #expect(audit.components(separatedBy: "console.sign-in").count - 1 == 2)
        #expect(audit.contains("console.sign-out"))
    }


    /// The console's "Register a debug device": where the gateway allows them, a form that takes a
    /// simulator's public key (JWK or PEM), with the session's form token, audited.
    @Test func anOperatorRegistersADebugDeviceInTheConsole() async throws {
        let closed = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await closed.stop() }
        let closedBrowser = Browser(base: closed.base)
        _ = try await closedBrowser.signIn()
        #expect(!(try await closedBrowser.get("/signet/admin/devices").text.contains("id=\"debug-device\"")))
        let key = try SigningKey.generate(.p256).verificationKey
        var answer = try await closedBrowser.post(
            "/signet/admin/devices/debug", [("csrf", try await closedBrowser.csrf()), ("name", "sim"), ("publicKey", key.jwk.jsonString)])
        #expect(answer.status == 403 && answer.text.contains("trust_level_insufficient"))

        let harness = try await GatewayHarness.start(transport: .router) { $0.allowDebugDevices = true }
        Cleanup.after { try await harness.stop() }
        let browser = Browser(base: harness.base)
        _ = try await browser.signIn()
        #expect(try await browser.get("/signet/admin/devices").text.contains("id=\"debug-device\""))
        answer = try await browser.post("/signet/admin/devices/debug", [("name", "sim"), ("publicKey", key.jwk.jsonString)])
        #expect(answer.status == 403 && answer.text.contains("csrf_invalid"))
        answer = try await browser.post(
            "/signet/admin/devices/debug", [("csrf", try await browser.csrf()), ("name", "sim"), ("publicKey", "garbage")])
        #expect(answer.status == 400 && answer.text.contains("malformed_message"))
        answer = try await browser.post(
            "/signet/admin/devices/debug",
            [("csrf", try await browser.csrf()), ("name", "Ana's simulator"), ("publicKey", key.pemRepresentation!)]
        )
        #expect(answer.status == 303, "\(answer.text)")
        let page = try await browser.get(try #require(answer.headers.first(name: "Location")))
        #expect(page.text.contains("<dt>Trust level</dt><dd>debug</dd>"))
        #expect(page.text.contains("<dt>debug_name</dt><dd>Ana&#39;s simulator</dd>"), "\(page.text)")
        #expect(page.text.contains(try key.jwk.thumbprint))
        let audit = try await browser.get("/signet/admin/audit").text
        #expect(audit.contains("<code>device.debug.add</code>"))
    }


    /// Users by name (byte order), fifty to a page, each with what it logs in with and a link to its
    /// devices; a name is shown escaped; no page without a session.
    @Test func theUsersPageListsUsersByNameAndPages() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        let browser = Browser(base: harness.base)
        #expect(try await browser.get("/signet/admin/users").headers.first(name: "Location") == "/signet/admin/sign-in")
        _ = try await browser.signIn()
        #expect(try await browser.get("/signet/admin/users").text.contains("No users."))

        let now = Date()
        var mufasa = try AccountRecord.make(name: "Mufasa", password: "pw", realm: "bank", algorithms: [.sha256, .md5], basicIterations: nil, now: now)
        mufasa.basicHash = "$pbkdf2-sha256$i=600000$c2FsdA$pw"
        _ = try await harness.store.putAccount(mufasa)
        _ = try await harness.store.putAccount(
            try AccountRecord.make(name: "<i>Scar", password: "pw", realm: "bank", algorithms: [.sha512_256], basicIterations: nil, now: now)
        )
        for index in 0..<49 {
            let name = "user-" + String(index + 100)
            _ = try await harness.store.putAccount(
                try AccountRecord.make(name: name, password: "pw", realm: "bank", algorithms: [.sha256], basicIterations: nil, now: now)
            )
        }
        let first = try await browser.get("/signet/admin/users")
        #expect(first.status == 200)
        let page = first.text
        // "<" sorts before "M" and "u": the escaped name comes first, the last user on the next page.
        let scar = try #require(page.range(of: "<td>&lt;i&gt;Scar</td>"))
        let mufasaRow = try #require(page.range(of: "<td>Mufasa</td><td>bank</td><td>Basic; Digest SHA-256, MD5</td>"))
        #expect(scar.lowerBound < mufasaRow.lowerBound)
        #expect(!page.contains("<i>Scar"))
        #expect(page.contains("href=\"/signet/admin/devices?q=%3Ci%3EScar\""))
        #expect(page.contains("<td>user-147</td>") && !page.contains("<td>user-148</td>"))
        #expect(page.contains("aria-current=\"page\">Users</a>"))
        // Never a hash or a userhash.
        let ha1 = try #require(mufasa.digests[.sha256]?.ha1)
        #expect(!page.contains("pbkdf2") && !page.contains(ha1))
        let next = try #require(page.range(of: "rel=\"next\" href=\"")).upperBound
        let link = String(page[next...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
        #expect(link == "/signet/admin/users?after=user-147")
        let second = try await browser.get(link).text
        #expect(second.contains("<td>user-148</td>") && !second.contains("<td>Mufasa</td>") && !second.contains("rel=\"next\""))
    }

    @Test func theKeysPageListsEveryKeyWithoutItsSecretAndWarnsAhead() async throws {
        let soon = Date().addingTimeInterval(10 * 86_400)
        let harness = try await GatewayHarness.start(transport: .router) { configuration in
            configuration.sharedSecrets.append(.init(keyId: "bank-v2", secretBase64: "c2VjcmV0LWJhbmstdjI=", notAfter: soon))
        }
        Cleanup.after { try await harness.stop() }
        let browser = Browser(base: harness.base)
        _ = try await browser.signIn()
        let page = try await browser.get("/signet/admin/keys").text
        for name in ["highscore-legacy", "bank-v1", "bank-v2", "response signing", "gateway"] {
            #expect(page.contains(name), "\(name)")
        }
        #expect(page.contains("class=\"status-expires-soon\">expires soon<"))
        #expect(page.contains("The shared secret bank-v2 expires"))
        #expect(!page.contains("c2VjcmV0LWJhbmstdjI") && !page.contains("PRIVATE KEY"))
        // Certificates by subject and serial, keys by what an operator calls them.
        #expect(page.contains(", serial ") && page.contains("ECDSA P-") && !page.contains("SignatureAlgorithm."))
    }

    @Test func aNewAdminTokenEndsTheSessionsOfTheOldOneOnEveryInstance() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let browser = Browser(base: harness.base)
        _ = try await browser.signIn()
        #expect(try await browser.get("/signet/admin/overview").status == 200)

        // A second instance on the same SQLite file, started after the token was changed.
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.listen.port = 0
        configuration.store = .sqlite(harness.folder.appendingPathComponent("signet.sqlite").path)
        configuration.adminToken = "the-rotated-token-of-at-least-32-characters"
        let rotated = try await RunningGateway.start(configuration, logger: Logger(label: "signet.test"))
        Cleanup.after { try await rotated.stop() }
        let elsewhere = Browser(base: "http://127.0.0.1:\(rotated.port)")
        elsewhere.cookie = browser.cookie
        #expect(try await elsewhere.get("/signet/admin/overview").status == 303)
        #expect(try await elsewhere.signIn().status == 401)
        #expect(try await elsewhere.signIn("the-rotated-token-of-at-least-32-characters").status == 303)
        #expect(try await elsewhere.get("/signet/admin/overview").status == 200)
        // The audit log tells the two tokens apart without showing either.
        let audit = try await elsewhere.get("/signet/admin/audit").text
        #expect(audit.contains("admin-token ") && !audit.contains("the-rotated-token") && !audit.contains(GatewayHarness.adminToken))
        let actors = Set(audit.matches(of: /admin-token [0-9a-f]{12}/).map { String($0.output) })
        #expect(actors.count == 2, "\(actors)")
    }

    @Test func signInAttemptsAreLimitedPerSourceAndSayWhenToComeBack() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let browser = Browser(base: harness.base)
        let window = RestOfWindow()
        for _ in 0..<10 { #expect(try await browser.signIn("guess").status == 401) }
        // The eleventh, even with the right token, waits for the rest of the minute.
        let answer = try await browser.signIn()
        #expect(answer.status == 429 && answer.text.contains("rate_limited") && browser.cookie == nil)
        let retryAfter = try #require(answer.headers.first(name: "Retry-After").flatMap { Int($0) })
        // The rest of the minute that began with the first attempt, never more than the window.
        #expect(window.admits(retryAfter), "\(retryAfter)")
    }

    /// Issue 25: the admin API took 300 wrong bearer tokens in 0.2 s, even from a source the
    /// console had locked. One count of failed admin credentials per source serves both.
    @Test func failedAdminCredentialsAreCountedOncePerSourceAcrossTheAPIAndTheConsole() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        func api(_ token: String) async throws -> GatewayHarness.Answer {
            try await GatewayHarness.send(
                method: "GET",
                url: harness.base + "/signet/v1/devices/dev_nobody",
                headers: [("Authorization", "Bearer \(token)")]
            )
        }
        let window = RestOfWindow()
        let guesses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<40 { group.addTask { try await api("guess-\(index)").status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        // Ten were looked at; the rest were refused before their token was.
        #expect(guesses.filter { $0 == 401 }.count == 10 && guesses.filter { $0 == 429 }.count == 30, "\(guesses)")
        let right = try await api(GatewayHarness.adminToken)
        #expect(right.status == 429 && right.reason == "rate_limited", "\(right.text)")
        let retryAfter = try #require(right.headers.first(name: "Retry-After").flatMap { Int($0) })
        #expect(window.admits(retryAfter), "\(retryAfter)")
        // The console answers the same source the same way.
        let browser = Browser(base: harness.base)
        #expect(try await browser.signIn().status == 429 && browser.cookie == nil)

        // And the other way round: a console locked by wrong tokens locks the API.
        let other = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await other.stop() }
        let console = Browser(base: other.base)
        for _ in 0..<10 { #expect(try await console.signIn("guess").status == 401) }
        let locked = try await GatewayHarness.send(
            method: "GET",
            url: other.base + "/signet/v1/devices/dev_nobody",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(locked.status == 429 && locked.reason == "rate_limited", "\(locked.text)")
    }

    @Test func withoutAnAdminTokenThereIsNoConsole() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.adminToken = nil }
        Cleanup.after { try await harness.stop() }
        let browser = Browser(base: harness.base)
        #expect(try await browser.get("/signet/admin/").status == 404)
        #expect(try await browser.signIn().status == 404)
    }

    @Test func theContractIsServedAsCommitted() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let answer = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/openapi.json")
        #expect(answer.status == 200 && answer.headers.first(name: "Content-Type") == "application/json")
        let file = SignetProcess.repositoryRoot.appendingPathComponent("Sources/SignetServer/Contract/openapi.json")
        #expect(answer.body == Array(try Data(contentsOf: file)))
        #expect((answer.json["openapi"] as? String)?.hasPrefix("3.1") == true)
    }
}
