// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SignetCore
import SignetMiddleware
import SignetPostgres
import SignetServer
import SignetTestSupport
import Testing

/// Firebase App Check tokens minted by PyJWT against a local stand-in for Firebase's JWKS endpoint
/// (`app_token_peer.py firebase`): accepted on `firebase-app-check` routes and, during a migration,
/// on routes that take either kind; refused each with its reason; the JWKS cached, fetched again for
/// a new key and never used past six hours.
@Suite(.awaitsCleanups) struct FirebaseAppCheckTests {
    static let project = "123456789012"
    static let appID = "1:123456789012:ios:0123456789abcdef"

    static func claims(_ change: (inout [String: Any]) -> Void = { _ in }) -> [String: Any] {
        let now = Int(Date().timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": "https://firebaseappcheck.googleapis.com/\(project)",
            "sub": appID,
            "aud": ["projects/\(project)", "projects/signet-demo"],
            "iat": now, "exp": now + 3600, "jti": UUID().uuidString,
        ]
        change(&claims)
        return claims
    }

    static func mint(_ server: PythonServer, _ claims: [String: Any], alg: String? = nil, typ: Any? = "JWT", kid: String? = nil) async throws -> String {
        var request: [String: Any] = ["claims": claims, "typ": typ ?? NSNull()]
        if let alg { request["alg"] = alg }
        if let kid { request["kid"] = kid }
        let answer = try await GatewayHarness.send(
            method: "POST",
            url: "http://127.0.0.1:\(server.port)/mint",
            body: Array(try JSONSerialization.data(withJSONObject: request))
        )
        return answer.text
    }

    static func fetches(_ server: PythonServer) async throws -> Int {
        Int(try await GatewayHarness.send(method: "GET", url: "http://127.0.0.1:\(server.port)/fetches").text) ?? -1
    }

    @Test func tokensFromTheProjectAreAcceptedAndEveryOtherRefusedWithItsReason() async throws {
        guard PythonPeer.available("jwt, cryptography") else { return }
        let firebase = try await PythonServer("app_token_peer.py", ["firebase", "300"])
        Cleanup.after { firebase.stop() }
        let harness = try await AppTokenTests.start { configuration, _ in
            configuration.firebaseAppCheck = .init(
                projectNumber: Self.project,
                appIds: [Self.appID],
                jwksUrl: "http://127.0.0.1:\(firebase.port)/v1/jwks"
            )
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/firebase", access: .firebaseAppCheck),
                .init(prefix: "/echo/either", access: .appTokenOrFirebase),
            ], at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let field = "X-Firebase-AppCheck"
        let token = try await Self.mint(firebase, Self.claims())
        for path in ["/echo/firebase/x", "/echo/either/x"] {
            let answer = try await AppTokenTests.use(token, harness.base + path, field: field)
            #expect(answer.status == 200, "\(path): \(answer.text)")
            let headers = answer.json["headers"] as? [String: String] ?? [:]
            #expect(headers["signet-app-id"] == Self.appID && headers["signet-device"] == nil, "\(headers)")
            #expect(headers["x-firebase-appcheck"] == token)
        }
        // One fetch serves many tokens (max-age 300).
        for _ in 0..<3 { #expect(try await AppTokenTests.use(token, harness.base + "/echo/firebase/y", field: field).status == 200) }
        #expect(try await Self.fetches(firebase) == 1)

        let cases: [(String, String, String)] = [
            ("another project's audience", try await Self.mint(firebase, Self.claims { $0["aud"] = ["projects/999"] }), "token_audience_mismatch"),
            ("another issuer", try await Self.mint(firebase, Self.claims { $0["iss"] = "https://firebaseappcheck.googleapis.com/999" }), "token_invalid"),
            ("expired", try await Self.mint(firebase, Self.claims { $0["exp"] = Int(Date().timeIntervalSince1970) - 5 }), "token_expired"),
            ("another app", try await Self.mint(firebase, Self.claims { $0["sub"] = "1:123456789012:android:ff" }), "token_invalid"),
            ("no typ", try await Self.mint(firebase, Self.claims(), typ: nil), "token_invalid"),
            ("RS512", try await Self.mint(firebase, Self.claims(), alg: "RS512"), "token_invalid"),
            ("unknown kid", try await Self.mint(firebase, Self.claims(), kid: "forged"), "token_invalid"),
            ("a Signet token field on a Firebase route", "", "token_missing"),
        ]
        for (name, minted, reason) in cases {
            let answer = try await AppTokenTests.use(minted.isEmpty ? nil : minted, harness.base + "/echo/firebase/x", field: field)
            #expect(answer.status == 401 && answer.reason == reason, "\(name): \(answer.status) \(answer.text)")
        }
        // Unknown kids fetch again at most once a minute: none so soon after the first fetch.
        _ = try await AppTokenTests.use(try await Self.mint(firebase, Self.claims(), kid: "forged-2"), harness.base + "/echo/firebase/x", field: field)
        #expect(try await Self.fetches(firebase) == 1)

        // A Signet token works on the either route, not on the Firebase-only one.
        let device = try await harness.register(.p256)
        let signet = try #require(try await AppTokenTests.issue(harness, device).json["token"] as? String)
        #expect(try await AppTokenTests.use(signet, harness.base + "/echo/either/x").status == 200)
        #expect(try await AppTokenTests.use(signet, harness.base + "/echo/firebase/x").reason == "token_missing")
        let neither = try await AppTokenTests.use(nil, harness.base + "/echo/either/x")
        #expect(neither.reason == "token_missing" && neither.text.contains("Signet-Token or X-Firebase-AppCheck"))
    }


    @Test func aRotatedKeyIsFetchedAndKeysAreNeverUsedPastSixHours() async throws {
        guard PythonPeer.available("jwt, cryptography") else { return }
        let firebase = try await PythonServer("app_token_peer.py", ["firebase", "86400"])
        var logger = Logger(label: "signet.test")
        logger.logLevel = .critical
        let verifier = FirebaseAppCheckVerifier(
            projectNumber: Self.project,
            appIDs: nil,
            jwksURL: "http://127.0.0.1:\(firebase.port)/v1/jwks",
            client: .shared,
            logger: logger,
            refetchSeconds: 0
        )
        let longLived = Self.claims { $0["exp"] = Int(Date().timeIntervalSince1970) + 7 * 3600 }
        let first = try await Self.mint(firebase, longLived)
        #expect(try await verifier.identity(for: first, now: Date()).appID == Self.appID)
        // Consuming needs a store to remember used tokens in: without one, nothing is accepted.
        do {
            _ = try await verifier.identity(for: first, now: Date(), consume: true)
            Issue.record("a token was consumed with no store to remember it")
        } catch let error as SignetError {
            #expect(error.code == .storeUnavailable)
        }
        // Firebase rotates: the new key is not in the cached set, so the set is fetched again.
        _ = try await GatewayHarness.send(method: "POST", url: "http://127.0.0.1:\(firebase.port)/rotate", body: [])
        let second = try await Self.mint(firebase, longLived)
        #expect(try await verifier.identity(for: second, now: Date()).appID == Self.appID)
        #expect(await verifier.fetches == 2)
        // The old key left the set with the rotation: its token no longer verifies.
        await #expect(throws: SignetError.self) { try await verifier.identity(for: first, now: Date()) }
        // max-age said a day; six hours is the ceiling. Past it, with Firebase unreachable, nothing
        // is accepted on stale keys.
        firebase.stop()
        let later = Date().addingTimeInterval(6 * 3600 + 5)
        do {
            _ = try await verifier.identity(for: second, now: later)
            Issue.record("a token was accepted on keys cached for more than six hours")
        } catch let error as SignetError {
            #expect(error.code == .tokenKeysUnavailable && error.code.httpStatus == 503)
        }
        // Within the six hours the cached keys still serve while Firebase is down.
        #expect(try await verifier.identity(for: second, now: Date().addingTimeInterval(3600)).appID == Self.appID)
    }

    /// On the embedded default (one gateway, SQLite), a route that consumes App Check tokens takes
    /// each once — of many sent at once, one passes — while routes that do not consume still take
    /// it; another spelling of the same token is not a fresh one, and a forgery uses up nothing.
    @Test func aConsumingRouteTakesEachTokenOnceOnSQLite() async throws {
        guard PythonPeer.available("jwt, cryptography") else { return }
        let firebase = try await PythonServer("app_token_peer.py", ["firebase", "300"])
        Cleanup.after { firebase.stop() }
        let harness = try await AppTokenTests.start(store: .sqlite) { configuration, _ in
            configuration.firebaseAppCheck = .init(projectNumber: Self.project, jwksUrl: "http://127.0.0.1:\(firebase.port)/v1/jwks")
            let once = GatewayConfiguration.Route(prefix: "/echo/once", access: .firebaseAppCheck(consumeTokens: true))
            configuration.routes.insert(contentsOf: [once, .init(prefix: "/echo/firebase", access: .firebaseAppCheck)], at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let upstream = try #require(harness.upstream)
        func outcome(_ token: String, _ path: String) async throws -> String {
            let answer = try await AppTokenTests.use(token, harness.base + path, field: "X-Firebase-AppCheck")
            return answer.status == 200 ? "200" : answer.reason ?? "\(answer.status)"
        }
        let token = try await Self.mint(firebase, Self.claims())
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 { group.addTask { try await outcome(token, "/echo/once/x") } }
            return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        #expect(outcomes == ["200": 1, "token_replayed": 15], "\(outcomes)")
        #expect(upstream.received.filter { $0.target == "/echo/once/x" }.count == 1)
        #expect(try await outcome(token, "/echo/firebase/x") == "200")
        // The signature's last base64url character carries spare bits: another spelling, same token.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let lastCharacter = try #require(token.last)
        let last = try #require(alphabet.firstIndex(of: lastCharacter))
        #expect(try await outcome(String(token.dropLast()) + String(alphabet[last ^ 1]), "/echo/once/x") != "200")
        // A forgery carrying a fresh token's signature is refused and uses up nothing.
        let fresh = try await Self.mint(firebase, Self.claims())
        let parts = fresh.split(separator: ".").map(String.init)
        let otherPayload = try await Self.mint(firebase, Self.claims { $0["sub"] = "1:123456789012:android:ff" }).split(separator: ".")[1]
        #expect(try await outcome([parts[0], String(otherPayload), parts[2]].joined(separator: "."), "/echo/once/x") == "token_invalid")
        #expect(try await outcome(fresh, "/echo/once/x") == "200")
    }

}
