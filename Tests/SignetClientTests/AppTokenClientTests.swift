// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// The SDK's app tokens over pinned TLS: fetched with a signed request, cached, renewed before
/// expiry, sent as `Signet-Token` on the configured paths (signatures elsewhere), and replaced once
/// when the gateway no longer takes the cached one.
@Suite(.awaitsCleanups) struct AppTokenClientTests {
    static func start(ttl: Int = 3600) async throws -> GatewayHarness {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-sdk-tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) { configuration in
            var tokens = GatewayConfiguration.Tokens(
                issuer: "https://gateway.example.com",
                audience: ["scores"],
                keyFile: folder.appendingPathComponent("tokens.pem").path
            )
            tokens.ttlSeconds = ttl
            configuration.tokens = tokens
            configuration.routes.insert(.init(prefix: "/echo/token", access: .appToken), at: 0)
        }
    }

    static func client(_ harness: GatewayHarness, renewal: Duration = .seconds(60)) async throws -> SignetClient {
        var configuration = try await harness.client().configuration
        configuration.appTokenPaths = ["/echo/token"]
        configuration.appTokenRenewal = renewal
        let client = try SignetClient(configuration: configuration)
        try await client.register(using: SoftwareKeyProvider())
        return client
    }

    @Test func theClientFetchesCachesAndSendsItsTokenOnTheConfiguredPathsOnly() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let client = try await Self.client(harness)
        let device = try #require(await client.device)
        let first = try await client.send("GET", harness.base + "/echo/token/balance")
        #expect(first.status == 200, "\(first.text)")
        let headers = first.json?["headers"] as? [String: String] ?? [:]
        #expect(headers["signet-device"] == device.deviceID && headers["signet-token"] == nil)
        // No signature went with it: the token stood in for one.
        #expect(headers["signature"] == nil && headers["signature-input"] == nil)
        let cached = try await client.appToken()
        #expect(try await client.send("GET", harness.base + "/echo/token/again").status == 200)
        #expect(try await client.appToken() == cached)
        #expect(abs(cached.expiresAt.timeIntervalSinceNow - 3600) < 10 && !cached.limitedUse)
        // Elsewhere the client signs, as before.
        let signed = try await client.send(
            "POST",
            harness.base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array(#"{"name":"Gilgamesh","score":100}"#.utf8)
        )
        #expect(signed.status == 201, "\(signed.status) \(signed.text)")
        // A limited-use token is new each time and never cached.
        let once = try await client.appToken(limitedUse: true)
        let stillCached = try await client.appToken()
        #expect(once.limitedUse && once != cached && stillCached == cached)
    }

    @Test func aTokenNearItsExpiryIsRenewedAndADroppedOneFetchedAgain() async throws {
        let harness = try await Self.start(ttl: 300)
        Cleanup.after { try await harness.stop() }
        // A renewal margin longer than the lifetime: every token is "near its expiry".
        let renewing = try await Self.client(harness, renewal: .seconds(400))
        let a = try await renewing.appToken()
        let b = try await renewing.appToken()
        #expect(a.token != b.token)
        #expect(try await renewing.send("GET", harness.base + "/echo/token/x").status == 200)

        let client = try await Self.client(harness)
        let kept = try await client.appToken()
        #expect(try await client.appToken() == kept)
        await client.dropAppToken()
        let fresh = try await client.appToken()
        #expect(fresh != kept)
        #expect(try await client.send("GET", harness.base + "/echo/token/x").status == 200)
        // Without a token the route refuses, signed or not.
        let signedOnly = try await client.send("GET", harness.base + "/echo/token/x", sign: false)
        #expect(signedOnly.status == 401 && signedOnly.reason == "token_missing")
    }
}
