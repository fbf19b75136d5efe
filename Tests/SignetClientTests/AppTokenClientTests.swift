// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import NIOPosix
import SignetClient
import SignetCore
import SignetServer
import SignetSimulator
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
            configuration.routes.insert(.init(prefix: "/echo/bound", access: .init(mode: "app-token", options: ["dpopNonce": .bool(true)])), at: 0)
        }
    }

    static func client(_ harness: GatewayHarness, renewal: Duration = .seconds(60), dpop: Bool = false) async throws -> SignetClient {
        var configuration = try await harness.client().configuration
        configuration.appTokenPaths = ["/echo/token", "/echo/bound"]
        configuration.dpopPaths = dpop ? ["/echo/bound"] : []
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

    @Test func onDPoPPathsTheClientProvesItsDeviceKeyAndFollowsTheNonce() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let client = try await Self.client(harness, dpop: true)
        let device = try #require(await client.device)
        // The gateway asks for a nonce first; the client follows it on its own.
        let first = try await client.send("GET", harness.base + "/echo/bound/balance")
        #expect(first.status == 200, "\(first.text)")
        let headers = first.json?["headers"] as? [String: String] ?? [:]
        #expect(headers["signet-device"] == device.deviceID)
        // Neither the token nor its proof goes upstream.
        #expect(headers["authorization"] == nil && headers["dpop"] == nil && headers["signet-token"] == nil, "\(headers)")
        #expect(try await client.send("POST", harness.base + "/echo/bound/again", body: Array("{}".utf8)).status == 200)
        // What it used there is a DPoP-bound token, kept apart from its bearer one.
        let bound = try await client.appToken(dpopBound: true)
        let bearerToken = try await client.appToken()
        #expect(bound.dpopBound && !bearerToken.dpopBound && bound != bearerToken)

        // A proof for another server, made with the device key: its thumbprint is the token's cnf.jkt.
        let token = try await client.appToken()
        let proof = try await client.dpopProof(method: "GET", url: "https://api.example.com/x", accessToken: token.token)
        let checked = try DPoPProof(
            verifying: proof, method: "GET", targetURI: "https://api.example.com/x", accessToken: token.token,
            now: Date(), lifetime: 60, clockSkew: 5
        )
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(Base64.urlDecode(String(token.token.split(separator: ".")[1]))!)) as? [String: Any])
        #expect((claims["cnf"] as? [String: String])?["jkt"] == checked.thumbprint)

        // Without dpopPaths the token goes as a bearer token, which the route refuses.
        let bearer = try await Self.client(harness)
        let refused = try await bearer.send("GET", harness.base + "/echo/bound/balance")
        #expect(refused.status == 401 && refused.reason == "dpop_proof_missing", "\(refused.text)")
    }

    /// An App Attest install proves possession with its proof key: its token is bound to that key
    /// (named by the assertion on the token request), the same key after a relaunch. Where no proof
    /// key can be made, requests still go signed by assertions and proofs are refused as such.
    @Test func anAppAttestInstallBindsItsTokenToItsProofKeyAcrossLaunches() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        var configuration = try await harness.client().configuration
        configuration.appTokenPaths = ["/echo/bound"]
        configuration.dpopPaths = ["/echo/bound"]
        let keychain = MemoryValueStore()
        let service = AppAttestLifecycleTests.service()
        let client = try SignetClient(configuration: configuration)
        let device = try await client.register(using: AppAttestLifecycle(service: service, store: keychain, proofKeys: SoftwareKeyFactory()))
        let answer = try await client.send("GET", harness.base + "/echo/bound/balance")
        #expect(answer.status == 200, "\(answer.text)")
        let headers = answer.json?["headers"] as? [String: String] ?? [:]
        #expect(headers["signet-device"] == device.deviceID && headers["signet-trust-level"] == "app-attest", "\(headers)")
        let token = try await client.appToken(dpopBound: true)
        let thumbprint = try await Self.proofThumbprint(client, token)
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(Base64.urlDecode(String(token.token.split(separator: ".")[1]))!)) as? [String: Any])
        #expect((claims["cnf"] as? [String: String])?["jkt"] == thumbprint)

        // Relaunch: the kept proof key, so a token bound before is still proven.
        let relaunched = try SignetClient(configuration: configuration)
        try await relaunched.start(with: AppAttestLifecycle(service: service, store: keychain, proofKeys: SoftwareKeyFactory()))
        #expect(try await Self.proofThumbprint(relaunched, token) == thumbprint)
        #expect(try await relaunched.send("GET", harness.base + "/echo/bound/again").status == 200)
        #expect(service.calls.filter { $0 == .attestKey }.count == 1)

        // No proof key: assertions still sign, proofs are refused before anything is sent.
        let plain = try SignetClient(configuration: configuration)
        try await plain.register(using: AppAttestLifecycle(service: service, store: MemoryValueStore(), proofKeys: UnavailableKeyFactory()))
        #expect(try await plain.send("POST", harness.base + "/scores", fields: [("Content-Type", "application/json")], body: Array(#"{"name":"Enkidu","score":1}"#.utf8)).status == 201)
        let refused = await #expect(throws: SignetError.self) { try await plain.send("GET", harness.base + "/echo/bound/balance") }
        #expect(refused?.code == .algUnsupported)
    }

    static func proofThumbprint(_ client: SignetClient, _ token: AppToken) async throws -> String {
        let proof = try await client.dpopProof(method: "GET", url: "https://api.example.com/x", accessToken: token.token)
        return try DPoPProof(
            verifying: proof, method: "GET", targetURI: "https://api.example.com/x", accessToken: token.token,
            now: Date(), lifetime: 60, clockSkew: 5
        ).thumbprint
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

    /// The gateway's token key was replaced while it was down: the client's cached token, still fresh
    /// by its clock, is refused as `token_invalid`, and the client fetches one token and sends again,
    /// with nothing for its caller to see.
    @Test func aTokenTheGatewayNoLongerTakesIsReplacedOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-sdk-replace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let port = try await Self.unusedPort()
        let responseKey = folder.appendingPathComponent("gateway.key.pem")
        func start(tokenKey: String, signingResponsesWith key: URL?) async throws -> GatewayHarness {
            try await GatewayHarness.start(tls: GatewayConfiguration.TLS(development: true)) { configuration in
                configuration.listen.port = port
                // One development certificate for both, written by the first: the client's pins hold.
                configuration.tls?.certificateFile = folder.appendingPathComponent("tls.pem").path
                configuration.tls?.keyFile = folder.appendingPathComponent("tls.key").path
                configuration.deviceCA = .init(
                    certificateFile: folder.appendingPathComponent("device-ca.pem").path,
                    keyFile: folder.appendingPathComponent("device-ca.key").path
                )
                configuration.store = .sqlite(folder.appendingPathComponent("signet.sqlite").path)
                configuration.tokens = .init(
                    issuer: "https://gateway.example.com",
                    audience: ["scores"],
                    keyFile: folder.appendingPathComponent(tokenKey).path
                )
                configuration.routes.insert(.init(prefix: "/echo/token", access: .appToken), at: 0)
                if let key { configuration.responseSigning = .init(keyFile: key.path, keyId: "gateway") }
            }
        }
        let first = try await start(tokenKey: "tokens-a.pem", signingResponsesWith: nil)
        try FileManager.default.copyItem(at: first.folder.appendingPathComponent("gateway.key.pem"), to: responseKey)
        let client = try await Self.client(first)
        let old = try await client.appToken()
        #expect(try await client.send("GET", first.base + "/echo/token/x").status == 200)
        try await first.stop()

        // The same origin, certificate, store and response key; a new token key, the old one not retired.
        let second = try await start(tokenKey: "tokens-b.pem", signingResponsesWith: responseKey)
        Cleanup.after {
            try await second.stop()
            try? FileManager.default.removeItem(at: folder)
        }
        #expect(second.base == first.base)
        // The cached token, sent by curl, is what the gateway now refuses.
        let refused = try await SignetProcess.run("curl", [
            "-s", "--cacert", folder.appendingPathComponent("tls.pem").path, "-H", "Signet-Token: \(old.token)",
            second.base + "/echo/token/x",
        ])
        #expect(refused.stdout.contains(#""reason":"token_invalid""#), "\(refused.stdout) \(refused.stderr)")
        let answer = try await client.send("GET", second.base + "/echo/token/x")
        #expect(answer.status == 200, "\(answer.status) \(answer.text)")
        let replacement = try await client.appToken()
        #expect(replacement != old)
        #expect(try await client.send("GET", second.base + "/echo/token/y").status == 200)
        #expect(try await client.appToken() == replacement)
    }

    /// A loopback port nothing listens on now, for a gateway that must come back where it was.
    static func unusedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        return port
    }
}
