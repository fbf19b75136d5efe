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

/// Firebase App Check tokens consumed once across two instances on one PostgreSQL.
@Suite(.awaitsCleanups) struct FirebaseAppCheckLiveTests {
    /// Firebase's replay protection, kept by the gateway: on a consuming route a token is accepted
    /// once across instances sharing PostgreSQL, however its signature is spelt, and only a token that
    /// verified uses up its claim.
    @Test(.enabled(if: TestPostgres.url != nil, "no PostgreSQL server (SIGNET_POSTGRES_URL)"))
    func aConsumingRouteAcceptsEachTokenOnceAcrossInstances() async throws {
        guard PythonPeer.available("jwt, cryptography") else { return }
        let firebase = try await PythonServer("app_token_peer.py", ["firebase", "300"])
        Cleanup.after { firebase.stop() }
        let server = try #require(TestPostgres.url)
        let url = try await PostgresStore.createDatabase(url: server, named: "signet_appcheck_\(UInt64.random(in: 0...UInt64.max))")
        let harness = try await AppTokenTests.start(store: .postgres(url), instances: 2) { configuration, _ in
            configuration.firebaseAppCheck = .init(projectNumber: FirebaseAppCheckTests.project, jwksUrl: "http://127.0.0.1:\(firebase.port)/v1/jwks")
            let once = GatewayConfiguration.Route(prefix: "/echo/once", access: .firebaseAppCheck(consumeTokens: true))
            configuration.routes.insert(contentsOf: [once, .init(prefix: "/echo/firebase", access: .firebaseAppCheck)], at: 0)
        }
        Cleanup.after { try await harness.stop() }
        let field = "X-Firebase-AppCheck"
        func outcome(_ token: String, _ path: String, gateway: Int = 0) async throws -> String {
            let answer = try await AppTokenTests.use(token, harness.url(gateway) + path, field: field)
            return answer.status == 200 ? "200" : answer.reason ?? "\(answer.status)"
        }

        let token = try await FirebaseAppCheckTests.mint(firebase, FirebaseAppCheckTests.claims())
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<24 { group.addTask { try await outcome(token, "/echo/once/x", gateway: index % 2) } }
            return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        #expect(outcomes == ["200": 1, "token_replayed": 23], "\(outcomes)")
        // Routes that do not consume still take it: it is Firebase's token, not the route's.
        #expect(try await outcome(token, "/echo/firebase/x") == "200")

        // The signature's last base64url character carries 4 spare bits: another spelling, same token.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let lastCharacter = try #require(token.last)
        let last = try #require(alphabet.firstIndex(of: lastCharacter))
        let respelt = String(token.dropLast()) + String(alphabet[last ^ 1])
        #expect(try await outcome(respelt, "/echo/once/x", gateway: 1) != "200")

        // A forgery carrying a fresh token's signature is refused and uses up nothing.
        let fresh = try await FirebaseAppCheckTests.mint(firebase, FirebaseAppCheckTests.claims())
        let parts = fresh.split(separator: ".").map(String.init)
        let otherPayload = try await FirebaseAppCheckTests.mint(firebase, FirebaseAppCheckTests.claims { $0["sub"] = "1:123456789012:android:ff" }).split(separator: ".")[1]
        #expect(try await outcome([parts[0], String(otherPayload), parts[2]].joined(separator: "."), "/echo/once/x") == "token_invalid")
        #expect(try await outcome(fresh, "/echo/once/x", gateway: 1) == "200")
        #expect(try await outcome(fresh, "/echo/once/x") == "token_replayed")
    }
}
