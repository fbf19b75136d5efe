// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
import SignetPostgres
import SignetServer
import SignetTestSupport
import Testing

/// Password routes through the gateway, in-process: Digest as RFC 7616 has it, Basic only where
/// allowed, failures limited, and an unknown user indistinguishable from a wrong password.
@Suite(.awaitsCleanups) struct PasswordLoginTests {
    static func echo(_ answer: GatewayHarness.Answer) throws -> [String: String] {
        try #require(answer.json["headers"] as? [String: String], "\(answer.status) \(answer.text)")
    }

    static func send(
        _ harness: GatewayHarness,
        _ path: String,
        _ authorization: String?,
        method: String = "GET",
        body: [UInt8]? = nil,
        gateway: Int = 0
    ) async throws -> GatewayHarness.Answer {
        try await GatewayHarness.send(
            method: method,
            url: harness.url(gateway) + path,
            headers: authorization.map { [("Authorization", $0)] } ?? [],
            body: body
        )
    }

    // MARK: Challenges

    @Test func aPasswordRouteAnswersWithChallengesStrongestFirstAndMD5OnlyWhereAllowed() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        let plain = try await Self.send(harness, "/echo/password/x", nil)
        #expect(plain.status == 401 && plain.reason == "credentials_missing")
        #expect(plain.headers["Content-Type"].first == "application/problem+json")
        let offered = try GatewayHarness.digestChallenges(plain)
        #expect(offered.map(\.algorithm) == [.sha256, .sha512_256])
        #expect(offered.allSatisfy { $0.realm == GatewayHarness.realm && $0.qop == [.auth, .authInt] && $0.userhash && !$0.stale })
        // Basic is not offered over plain HTTP.
        #expect(!plain.headers["WWW-Authenticate"].contains { $0.hasPrefix("Basic") })

        let md5 = try await Self.send(harness, "/echo/md5/x", nil)
        #expect(try GatewayHarness.digestChallenges(md5).map(\.algorithm) == [.sha256, .sha512_256, .md5])
        let authInt = try await Self.send(harness, "/echo/int/x", nil)
        #expect(try GatewayHarness.digestChallenges(authInt).allSatisfy { $0.qop == [.authInt] })
    }

    // MARK: Digest

    @Test(arguments: [DigestAlgorithm.sha256, .sha512_256])
    func aDigestLoginReachesTheUpstreamAsTheUserWithoutItsAuthorization(_ algorithm: DigestAlgorithm) async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        #expect(try await harness.putUser("Mufasa", password: "Circle of Life") == 201)
        let challenge = try await harness.challenge("/echo/password/profile?tab=1", algorithm: algorithm)
        let credentials = GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", uri: "/echo/password/profile?tab=1")
        // With identity fields of its own, in both spellings: the gateway's replace them.
        let answer = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/echo/password/profile?tab=1",
            headers: [("Authorization", credentials.fieldValue), ("Signet-User", "root"), ("Signet_User", "root")]
        )
        #expect(answer.status == 200, "\(answer.text)")
        let headers = try Self.echo(answer)
        #expect(headers["signet-user"] == "Mufasa")
        #expect(headers["signet-trust-level"] == "password")
        #expect(headers["authorization"] == nil && headers["signet-key-id"] == nil && headers["signet-device"] == nil)
        #expect(headers["signet_user"] == nil)
        // rspauth: the gateway knows the password too.
        let info = try #require(answer.headers["Authentication-Info"].first)
        let parsed = try HTTPAuthentication(credentials: "Digest " + info)
        let ha1 = DigestResponse.ha1(username: "Mufasa", realm: GatewayHarness.realm, password: "Circle of Life", algorithm: algorithm)
        let expected = DigestResponse.rspauth(
            ha1: ha1,
            nonce: challenge.nonce,
            nc: "00000001",
            cnonce: credentials.cnonce,
            qop: .auth,
            uri: credentials.uri,
            algorithm: algorithm
        )
        #expect(parsed["rspauth"] == expected && parsed["qop"] == "auth" && parsed["nc"] == "00000001")
    }

    @Test func aUserhashAndAnExtendedNameLogInTheSameUser() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        #expect(try await harness.putUser("Jäsøn Doe", password: "Secret, or not?") == 201)
        for useUserhash in [true, false] {
            let challenge = try await harness.challenge("/echo/password/doe.json", algorithm: .sha512_256)
            let credentials = GatewayHarness.digest(
                challenge,
                user: "Jäsøn Doe",
                password: "Secret, or not?",
                uri: "/echo/password/doe.json",
                useUserhash: useUserhash
            )
            #expect(credentials.fieldValue.contains(useUserhash ? "userhash=true" : "username*=UTF-8''J%C3%A4s%C3%B8n%20Doe"))
            let answer = try await Self.send(harness, "/echo/password/doe.json", credentials.fieldValue)
            #expect(answer.status == 200, "userhash \(useUserhash): \(answer.text)")
            // Non-ASCII reaches the upstream percent-encoded, one unambiguous value.
            #expect(try Self.echo(answer)["signet-user"] == "J%C3%A4s%C3%B8n Doe")
        }
    }

    @Test func md5IsRefusedUnlessTheRouteOptsIn() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let challenge = try await harness.challenge("/echo/md5/a", algorithm: .md5)
        let onMD5Route = GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", uri: "/echo/md5/a")
        #expect(try await Self.send(harness, "/echo/md5/a", onMD5Route.fieldValue).status == 200)
        // The same MD5 answer elsewhere, with a fresh nonce.
        var elsewhere = try await harness.challenge("/echo/md5/a", algorithm: .md5)
        elsewhere.nonce = try await harness.challenge("/echo/password/a").nonce
        let refused = try await Self.send(
            harness,
            "/echo/password/a",
            GatewayHarness.digest(elsewhere, user: "Mufasa", password: "Circle of Life", uri: "/echo/password/a").fieldValue
        )
        #expect(refused.status == 401 && refused.reason == "alg_unsupported", "\(refused.text)")
        #expect(!(try GatewayHarness.digestChallenges(refused).contains { $0.algorithm == .md5 }))
    }

    @Test func aReplayedNonceCountIsRefusedAndParallelCountsAreEachAcceptedOnce() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let challenge = try await harness.challenge("/echo/password/p")
        let counts = Array(UInt32(1)...24).shuffled()
        let fields = counts.map {
            GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", uri: "/echo/password/p", count: $0).fieldValue
        }
        // A browser sends in parallel: every count is accepted, whatever order they arrive in.
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for field in fields { group.addTask { try await Self.send(harness, "/echo/password/p", field).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: counts.count))
        for field in fields.prefix(3) {
            let replayed = try await Self.send(harness, "/echo/password/p", field)
            #expect(replayed.status == 401 && replayed.reason == "nonce_replayed", "\(replayed.text)")
        }
        // `0000000a` and `0000000A` are one count: a re-spelt count, with a response made for that
        // spelling, is not a new one.
        var respelt = GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", uri: "/echo/password/p", count: 10)
        respelt.nc = "0000000A"
        respelt.response = DigestResponse.response(
            ha1: DigestResponse.ha1(username: "Mufasa", realm: GatewayHarness.realm, password: "Circle of Life", algorithm: .sha256),
            nonce: challenge.nonce, nc: "0000000A", cnonce: respelt.cnonce, qop: .auth, method: "GET", uri: "/echo/password/p",
            algorithm: .sha256)
        #expect(try await Self.send(harness, "/echo/password/p", respelt.fieldValue).reason == "nonce_replayed")
    }

    @Test func aStaleNonceIsAnsweredStaleOnlyForTheRightPasswordAndTheRetrySucceeds() async throws {
        // Long enough that the retry's fresh nonce is still fresh on a loaded two-core machine.
        let harness = try await GatewayHarness.startWithPasswords(transport: .router) { $0.passwords?.nonceLifetimeSeconds = 5 }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let old = try await harness.challenge("/echo/password/s")
        try await Task.sleep(for: .milliseconds(5300))
        let wrong = GatewayHarness.digest(old, user: "Mufasa", password: "wrong", uri: "/echo/password/s")
        let refused = try await Self.send(harness, "/echo/password/s", wrong.fieldValue)
        let refusedStale = try GatewayHarness.digestChallenges(refused)[0].stale
        #expect(refused.reason == "credentials_invalid" && !refusedStale)

        let right = GatewayHarness.digest(old, user: "Mufasa", password: "Circle of Life", uri: "/echo/password/s")
        let stale = try await Self.send(harness, "/echo/password/s", right.fieldValue)
        #expect(stale.status == 401 && stale.reason == "digest_nonce_stale")
        let fresh = try #require(try GatewayHarness.digestChallenges(stale).first)
        #expect(fresh.stale && fresh.nonce != old.nonce)
        let retry = GatewayHarness.digest(fresh, user: "Mufasa", password: "Circle of Life", uri: "/echo/password/s")
        #expect(try await Self.send(harness, "/echo/password/s", retry.fieldValue).status == 200)
    }

    @Test func forgedForeignAndMisdirectedAnswersAreRefusedWithTheirReasons() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        let other = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after {
            try await harness.stop()
            try await other.stop()
        }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let challenge = try await harness.challenge("/echo/password/f")
        func answer(_ challenge: DigestChallenge, uri: String = "/echo/password/f") -> String {
            GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", uri: uri).fieldValue
        }
        var forged = challenge
        forged.nonce = String(challenge.nonce.dropLast()) + (challenge.nonce.hasSuffix("A") ? "B" : "A")
        #expect(try await Self.send(harness, "/echo/password/f", answer(forged)).reason == "digest_nonce_invalid")
        // Another gateway's nonce (another store, another secret).
        let foreign = try await other.challenge("/echo/password/f")
        #expect(try await Self.send(harness, "/echo/password/f", answer(foreign)).reason == "digest_nonce_invalid")
        // An answer for one URI sent to another.
        let misdirected = try await Self.send(harness, "/echo/password/other", answer(challenge))
        #expect(misdirected.status == 400 && misdirected.reason == "digest_uri_mismatch")
        // Another realm.
        var realm = challenge
        realm.realm = "elsewhere"
        #expect(try await Self.send(harness, "/echo/password/f", answer(realm)).reason == "credentials_invalid")
        // Two Authorization fields.
        let two = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/echo/password/f",
            headers: [("Authorization", answer(challenge)), ("Authorization", answer(challenge))]
        )
        #expect(two.status == 400 && two.reason == "malformed_header")
        // A scheme it does not take: asked again.
        let bearer = try await Self.send(harness, "/echo/password/f", "Bearer abc")
        #expect(bearer.status == 401 && bearer.reason == "credentials_missing")
        // And the untouched answer still works.
        #expect(try await Self.send(harness, "/echo/password/f", answer(challenge)).status == 200)
    }

    @Test func anAuthIntRouteCoversTheBodyBothWays() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let body = Array(#"{"amount":"2300.00","to":"DE89"}"#.utf8)
        let challenge = try await harness.challenge("/echo/int/transfer", method: "POST")
        let auth = GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", method: "POST", uri: "/echo/int/transfer", body: body)
        let refused = try await Self.send(harness, "/echo/int/transfer", auth.fieldValue, method: "POST", body: body)
        #expect(refused.status == 401 && refused.reason == "digest_qop_unsupported")

        let credentials = GatewayHarness.digest(
            challenge, user: "Mufasa", password: "Circle of Life", method: "POST", uri: "/echo/int/transfer", body: body, qop: .authInt)
        let answer = try await Self.send(harness, "/echo/int/transfer", credentials.fieldValue, method: "POST", body: body)
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json["bodyBytes"] as? Int == body.count)
        // rspauth covers the answer's body.
        let info = try HTTPAuthentication(credentials: "Digest " + (try #require(answer.headers["Authentication-Info"].first)))
        let ha1 = DigestResponse.ha1(username: "Mufasa", realm: GatewayHarness.realm, password: "Circle of Life", algorithm: .sha256)
        #expect(
            info["rspauth"]
                == DigestResponse.rspauth(
                    ha1: ha1, nonce: challenge.nonce, nc: "00000001", cnonce: credentials.cnonce, qop: .authInt,
                    uri: "/echo/int/transfer", responseBody: answer.body, algorithm: .sha256)
        )
        // A body changed on the way does not match the response.
        let tampered = GatewayHarness.digest(
            challenge, user: "Mufasa", password: "Circle of Life", method: "POST", uri: "/echo/int/transfer", body: body, qop: .authInt,
            count: 2)
        let changed = try await Self.send(harness, "/echo/int/transfer", tampered.fieldValue, method: "POST", body: Array("{}".utf8))
        #expect(changed.reason == "credentials_invalid")
    }

    @Test func theRouteCanKeepTheAuthorizationFieldForTheUpstream() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let challenge = try await harness.challenge("/echo/keep/k")
        let field = GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", uri: "/echo/keep/k").fieldValue
        let answer = try await Self.send(harness, "/echo/keep/k", field)
        #expect(try Self.echo(answer)["authorization"] == field)
    }

    // MARK: Basic

    @Test func basicIsRefusedOverPlainHTTPUnlessAllowed() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Aladdin", password: "open sesame")
        let basic = BasicCredentials(username: "Aladdin", password: "open sesame").fieldValue
        let refused = try await Self.send(harness, "/echo/password/b", basic)
        #expect(refused.status == 403 && refused.reason == "insecure_transport")

        let development = try await GatewayHarness.startWithPasswords(transport: .router) { $0.passwords?.allowInsecureHTTP = true }
        Cleanup.after { try await development.stop() }
        try await development.putUser("Aladdin", password: "open sesame")
        let challenged = try await Self.send(development, "/echo/password/b", nil)
        #expect(challenged.headers["WWW-Authenticate"].last == #"Basic realm="signet-bank", charset="UTF-8""#)
        let answer = try await Self.send(development, "/echo/password/b", basic)
        #expect(answer.status == 200)
        #expect(try Self.echo(answer)["signet-user"] == "Aladdin")
        #expect(try Self.echo(answer)["authorization"] == nil)
        // auth-int routes take no Basic at all.
        #expect(try await Self.send(development, "/echo/int/b", basic).reason == "credentials_missing")
    }

    /// Whether Basic is safe depends on the scheme clients use: a reload that drops `https` stops
    /// taking it at once, although `passwords` is unchanged (found in review: the running
    /// authenticator, kept for its lockouts, still took passwords in clear until a restart).
    @Test func aReloadThatDropsHTTPSStopsTakingBasic() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router) { $0.publicScheme = "https" }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Aladdin", password: "open sesame")
        let basic = BasicCredentials(username: "Aladdin", password: "open sesame").fieldValue
        #expect(try await Self.send(harness, "/echo/password/b", basic).status == 200)
        let reloader = harness.gateways[0].reloader
        var plain = try #require(reloader.configuration)
        plain.publicScheme = nil
        try reloader.reload(to: plain)
        let refused = try await Self.send(harness, "/echo/password/b", basic)
        #expect(refused.status == 403 && refused.reason == "insecure_transport", "\(refused.text)")
    }

    // MARK: No oracle, and limits

    @Test func anUnknownUserAndAWrongPasswordAnswerAlikeInStatusBodyAndTime() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router) {
            $0.passwords?.allowInsecureHTTP = true
            $0.passwords?.maxFailures = 1000
            $0.passwords?.maxFailuresPerSource = 1000
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Aladdin", password: "open sesame")
        // Digest: the same answer, challenges apart (each has a fresh nonce).
        var bodies: Set<String> = []
        for user in ["Aladdin", "Nobody"] {
            let challenge = try await harness.challenge("/echo/password/o")
            let answer = try await Self.send(
                harness,
                "/echo/password/o",
                GatewayHarness.digest(challenge, user: user, password: "wrong", uri: "/echo/password/o").fieldValue
            )
            #expect(answer.status == 401 && answer.reason == "credentials_invalid")
            bodies.insert(answer.text)
        }
        #expect(bodies.count == 1)
        // Basic: the same answer and, a PBKDF2 either way, the same time.
        func timed(_ user: String) async throws -> (Duration, String) {
            let start = ContinuousClock.now
            let answer = try await Self.send(harness, "/echo/password/o", BasicCredentials(username: user, password: "wrong").fieldValue)
            #expect(answer.status == 401 && answer.reason == "credentials_invalid")
            return (ContinuousClock.now - start, answer.text)
        }
        var known: [Duration] = []
        var unknown: [Duration] = []
        for _ in 0..<7 {
            let (a, bodyA) = try await timed("Aladdin")
            let (b, bodyB) = try await timed("Nobody-\(UUID())")
            #expect(bodyA == bodyB)
            known.append(a)
            unknown.append(b)
        }
        // The fastest of each (least disturbed by whatever else runs): without the stand-in an
        // unknown user answers some 30 times faster than a PBKDF2.
        let ratio = known.min()! / unknown.min()!
        #expect(ratio > 1.0 / 3 && ratio < 3, "fastest known/unknown: \(ratio)")
    }

    @Test func failuresLockTheUserOutUntilTheWindowClosesAndASuccessClearsThem() async throws {
        // The gateway's time is the test's: the window closes when the test moves the clock.
        let clock = ManualClock()
        let harness = try await GatewayHarness.startWithPasswords(transport: .router, clock: clock) {
            $0.passwords?.maxFailures = 3
            $0.passwords?.lockoutSeconds = 2
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        func attempt(_ user: String, _ password: String) async throws -> GatewayHarness.Answer {
            let challenge = try await harness.challenge("/echo/password/l")
            return try await Self.send(
                harness,
                "/echo/password/l",
                GatewayHarness.digest(challenge, user: user, password: password, uri: "/echo/password/l").fieldValue
            )
        }
        // Two failures, a success (which clears them), two more: not locked.
        for _ in 0..<2 { #expect(try await attempt("Mufasa", "wrong").reason == "credentials_invalid") }
        #expect(try await attempt("Mufasa", "Circle of Life").status == 200)
        for _ in 0..<2 { #expect(try await attempt("Mufasa", "wrong").reason == "credentials_invalid") }
        #expect(try await attempt("Mufasa", "Circle of Life").status == 200)
        // Three in a row: locked, even for the right password, with Retry-After.
        for _ in 0..<3 { #expect(try await attempt("Mufasa", "wrong").reason == "credentials_invalid") }
        let locked = try await attempt("Mufasa", "Circle of Life")
        #expect(locked.status == 429 && locked.reason == "login_locked")
        let retryAfter = try #require(locked.headers["Retry-After"].first.flatMap(Int.init))
        #expect((1...2).contains(retryAfter))
        // An unknown name locks the same way: lockouts say nothing about who exists.
        for _ in 0..<3 { #expect(try await attempt("Nobody", "wrong").reason == "credentials_invalid") }
        #expect(try await attempt("Nobody", "wrong").reason == "login_locked")
        clock.advance(by: 1.9)
        #expect(try await attempt("Mufasa", "Circle of Life").reason == "login_locked", "the window is still open")
        clock.advance(by: 0.3)
        #expect(try await attempt("Mufasa", "Circle of Life").status == 200)
    }

    @Test func aUserhashAndTheNameCountAsOneWhetherTheUserExistsOrNot() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router) {
            $0.passwords?.maxFailures = 3
            $0.passwords?.maxFailuresPerSource = 1000
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("alice", password: "right")
        // Three wrong answers sent by userhash, then one by name: locked, for a real user and for a
        // name nobody has alike, so the lockout says nothing about who exists.
        for user in ["alice", "nobody"] {
            for _ in 0..<3 {
                let challenge = try await harness.challenge("/echo/password/u")
                let field = GatewayHarness.digest(challenge, user: user, password: "wrong", uri: "/echo/password/u", useUserhash: true)
                #expect(field.userhash)
                #expect(try await Self.send(harness, "/echo/password/u", field.fieldValue).reason == "credentials_invalid", "\(user)")
            }
            let challenge = try await harness.challenge("/echo/password/u")
            let byName = GatewayHarness.digest(challenge, user: user, password: "wrong", uri: "/echo/password/u").fieldValue
            #expect(try await Self.send(harness, "/echo/password/u", byName).reason == "login_locked", "\(user)")
            let basic = BasicCredentials(username: user, password: "wrong").fieldValue
            #expect(try await Self.send(harness, "/echo/password/u", basic).reason == "insecure_transport")
        }
    }

    /// Issue 25: after one Basic login filled the cache, wrong passwords locked the user, yet the
    /// right one still answered 200 from the cache; and each cache hit cleared others' failures.
    @Test func aWarmBasicCacheNeitherOpensALockedAccountNorClearsItsFailures() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router) {
            $0.passwords?.allowInsecureHTTP = true
            $0.passwords?.maxFailures = 3
            $0.passwords?.maxFailuresPerSource = 1000
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Aladdin", password: "open sesame")
        let right = BasicCredentials(username: "Aladdin", password: "open sesame").fieldValue
        let wrong = BasicCredentials(username: "Aladdin", password: "guess").fieldValue
        #expect(try await Self.send(harness, "/echo/password/c", right).status == 200)
        // Two failures, then a cache hit: the failures stay.
        for _ in 0..<2 { #expect(try await Self.send(harness, "/echo/password/c", wrong).reason == "credentials_invalid") }
        #expect(try await Self.send(harness, "/echo/password/c", right).status == 200)
        #expect(try await Self.send(harness, "/echo/password/c", wrong).reason == "credentials_invalid")
        // Three: locked, for the right password with the cache warm, and for Digest alike.
        let locked = try await Self.send(harness, "/echo/password/c", right)
        #expect(locked.status == 429 && locked.reason == "login_locked", "\(locked.text)")
        let challenge = try await harness.challenge("/echo/password/c")
        let digest = GatewayHarness.digest(challenge, user: "Aladdin", password: "open sesame", uri: "/echo/password/c")
        #expect(try await Self.send(harness, "/echo/password/c", digest.fieldValue).reason == "login_locked")
    }

    /// Issue 25: a userhash had a budget per Digest algorithm — five guesses under SHA-256, five more
    /// under SHA-512-256. A user's failures count once, however the name was sent.
    @Test func aUserhashHasOneBudgetAcrossAlgorithms() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router) {
            $0.passwords?.maxFailures = 3
            $0.passwords?.maxFailuresPerSource = 1000
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("alice", password: "right")
        func attempt(_ algorithm: DigestAlgorithm, password: String, userhash: Bool) async throws -> GatewayHarness.Answer {
            let challenge = try await harness.challenge("/echo/md5/h", algorithm: algorithm)
            let field = GatewayHarness.digest(challenge, user: "alice", password: password, uri: "/echo/md5/h", useUserhash: userhash)
            return try await Self.send(harness, "/echo/md5/h", field.fieldValue)
        }
        #expect(try await attempt(.sha256, password: "one", userhash: true).reason == "credentials_invalid")
        #expect(try await attempt(.sha512_256, password: "two", userhash: true).reason == "credentials_invalid")
        #expect(try await attempt(.md5, password: "three", userhash: true).reason == "credentials_invalid")
        for algorithm in [DigestAlgorithm.sha256, .sha512_256, .md5] {
            #expect(try await attempt(algorithm, password: "four", userhash: true).reason == "login_locked", "\(algorithm)")
            #expect(try await attempt(algorithm, password: "right", userhash: false).reason == "login_locked", "\(algorithm)")
        }
    }

    @Test func aParallelBurstOfGuessesCannotOutrunTheLimit() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router) {
            $0.passwords?.maxFailures = 3
            $0.passwords?.maxFailuresPerSource = 1000
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let challenge = try await harness.challenge("/echo/password/burst")
        let guesses = (0..<30).map {
            GatewayHarness.digest(challenge, user: "Mufasa", password: "guess-\($0)", uri: "/echo/password/burst", count: UInt32($0 + 1)).fieldValue
        }
        let reasons = try await withThrowingTaskGroup(of: String?.self) { group in
            for guess in guesses { group.addTask { try await Self.send(harness, "/echo/password/burst", guess).reason } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Exactly the limit was evaluated; every other guess was refused before its check.
        #expect(reasons.filter { $0 == "credentials_invalid" }.count == 3, "\(reasons)")
        #expect(reasons.filter { $0 == "login_locked" }.count == 27)
    }

    @Test func failuresFromOneSourceAcrossManyNamesLockTheSource() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router) {
            $0.passwords?.maxFailures = 100
            $0.passwords?.maxFailuresPerSource = 4
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        for index in 0..<4 {
            let challenge = try await harness.challenge("/echo/password/m")
            let field = GatewayHarness.digest(challenge, user: "user\(index)", password: "x", uri: "/echo/password/m").fieldValue
            #expect(try await Self.send(harness, "/echo/password/m", field).reason == "credentials_invalid")
        }
        let challenge = try await harness.challenge("/echo/password/m")
        let field = GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", uri: "/echo/password/m").fieldValue
        let locked = try await Self.send(harness, "/echo/password/m", field)
        #expect(locked.status == 429 && locked.reason == "login_locked" && !locked.headers["Retry-After"].isEmpty)
    }

    // MARK: Several instances


}
