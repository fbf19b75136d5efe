// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import NIOHTTP1
import SignetCore
import SignetMiddleware
import SignetPostgres
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// App tokens where a socket is the point: PyJWT fetching the gateway's JWKS itself, and two
/// instances on one PostgreSQL sharing what they accepted.
@Suite(.awaitsCleanups) struct AppTokenLiveTests {
    @Test func aSignedDeviceGetsATokenPyJWTVerifiesWithTheGatewaysJWKSAndTheUpstreamSeesTheDevice() async throws {
        // PyJWT fetches the JWKS itself: over a socket.
        let harness = try await AppTokenTests.start(transport: .sockets)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let answer = try await AppTokenTests.issue(harness, device)
        #expect(answer.status == 201, "\(answer.text)")
        #expect(answer.headers.first(name: "Cache-Control") == "no-store")
        let token = try #require(answer.json["token"] as? String)
        let expires = try #require((answer.json["expiresAt"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
        #expect(abs(expires.timeIntervalSinceNow - 3600) < 10)

        // The JWKS: current and next key, cacheable.
        let jwks = try await GatewayHarness.send(method: "GET", url: harness.base + "/signet/v1/jwks")
        #expect(jwks.status == 200 && jwks.headers.first(name: "Cache-Control") == "public, max-age=300")
        let ring = try #require(harness.gateway.tokenIssuer?.ring)
        #expect((jwks.json["keys"] as? [[String: Any]])?.compactMap { $0["kid"] as? String } == ring.keys.map(\.kid))
        #expect(ring.keys.count == 2)

        if PythonPeer.available("jwt, cryptography") {
            let output = try await PythonPeer.run(
                "app_token_peer.py",
                ["verify", harness.base + "/signet/v1/jwks", AppTokenTests.issuer, "payments", token]
            )
            let verified = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            let header = try #require(verified["header"] as? [String: Any])
            let claims = try #require(verified["claims"] as? [String: Any])
            #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == ring.signingKID)
            #expect(claims["sub"] as? String == device.deviceID && claims["key_id"] as? String == device.keyID)
            #expect(claims["aud"] as? [String] == ["scores", "payments"] && claims["iss"] as? String == AppTokenTests.issuer)
            #expect(claims["trust_level"] as? String == "device-key")
            #expect((claims["exp"] as? Int).map { $0 - (claims["iat"] as? Int ?? 0) } == 3600)
            let thumbprint = try device.key.verificationKey.jwk.thumbprint
            #expect((claims["cnf"] as? [String: String])?["jkt"] == thumbprint)
            #expect(claims["limited_use"] == nil)
        }

        // Accepted where a token is the route's policy; the token itself never reaches the upstream.
        for path in ["/echo/token/balance", "/echo/pay/transfer"] {
            let used = try await AppTokenTests.use(token, harness.base + path)
            #expect(used.status == 200, "\(path): \(used.text)")
            let headers = used.json["headers"] as? [String: String] ?? [:]
            #expect(headers["signet-device"] == device.deviceID && headers["signet-trust-level"] == "device-key")
            #expect(headers["signet-key-id"] == device.keyID && headers["signet-token"] == nil)
        }
        // A token opens token routes only: a signature route still wants a signature.
        let elsewhere = try await AppTokenTests.use(token, harness.base + "/echo/other")
        #expect(elsewhere.status == 401 && elsewhere.reason == "signature_missing")
    }

    @Test(.enabled(if: TestPostgres.url != nil, "no PostgreSQL server (SIGNET_POSTGRES_URL)"))
    func aLimitedUseTokenIsAcceptedExactlyOnceAcrossTwoInstances() async throws {
        let server = try #require(TestPostgres.url)
        let url = try await PostgresStore.createDatabase(url: server, named: "signet_tokens_\(UInt64.random(in: 0...UInt64.max))")
        let harness = try await AppTokenTests.start(store: .postgres(url), instances: 2)
        Cleanup.after { try await harness.stop() }
        // Both instances read the key the first one created.
        #expect(harness.gateways[0].gateway.tokenIssuer?.ring.signingKID == harness.gateways[1].gateway.tokenIssuer?.ring.signingKID)
        let device = try await harness.register(.p256, gateway: 1)
        let answer = try await AppTokenTests.issue(harness, device, body: #"{"limitedUse":true}"#, gateway: 0)
        let token = try #require(answer.json["token"] as? String, "\(answer.text)")
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<24 {
                group.addTask {
                    let answer = try await AppTokenTests.use(token, harness.url(index % 2) + "/echo/token/x")
                    return answer.status == 200 ? "200" : answer.reason ?? "\(answer.status)"
                }
            }
            return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        #expect(outcomes == ["200": 1, "token_replayed": 23], "\(outcomes)")
    }
}
