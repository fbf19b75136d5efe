// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetMiddleware
import SignetPostgres
import SignetServer
import SignetStore
import NIOHTTP1
import SignetTestSupport
import SignetSimulator
import Testing

/// App tokens end to end: issued to a signed device, checked by PyJWT with the JWKS fetched from the
/// gateway, accepted on `app-token` routes only, each bad token refused with its reason, keys
/// rotated, and a limited-use token used exactly once across two instances on PostgreSQL.
@Suite(.awaitsCleanups) struct AppTokenTests {
    static let issuer = "https://gateway.example.com"

    /// Tokens for `scores` and `payments`; `/echo/token` takes any, `/echo/pay` only `payments`'.
    static func start(
        store: GatewayHarness.StoreKind = .sqlite,
        instances: Int = 1,
        keyFolder: URL? = nil,
        transport: GatewayHarness.Transport = .router,
        adjust: @escaping (inout GatewayConfiguration, URL) -> Void = { _, _ in }
    ) async throws -> GatewayHarness {
        let folder = keyFolder ?? FileManager.default.temporaryDirectory.appendingPathComponent("signet-tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try await GatewayHarness.start(store: store, instances: instances, transport: instances == 1 ? transport : .sockets) { configuration in
            var tokens = GatewayConfiguration.Tokens(
                issuer: issuer,
                audience: ["scores", "payments"],
                keyFile: folder.appendingPathComponent("tokens-1.pem").path
            )
            tokens.nextKeyFile = folder.appendingPathComponent("tokens-2.pem").path
            configuration.tokens = tokens
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/token", access: .appToken),
                .init(prefix: "/echo/pay", access: .appToken(audience: "payments")),
            ], at: 0)
            adjust(&configuration, folder)
        }
    }

    static func issue(
        _ harness: GatewayHarness,
        _ device: GatewayHarness.Device,
        body: String = "",
        contentType: String = "application/json",
        gateway: Int = 0
    ) async throws -> GatewayHarness.Answer {
        let request = try HTTPMessage.request(
            method: "POST",
            uri: harness.url(gateway) + "/signet/v1/tokens",
            fields: body.isEmpty ? [] : [("Content-Type", contentType)],
            body: Array(body.utf8)
        )
        return try await GatewayHarness.send(try device.signer.sign(request, created: Date(), nonce: Nonce.random()))
    }

    static func use(_ token: String?, _ url: String, field: String = "Signet-Token") async throws -> GatewayHarness.Answer {
        try await GatewayHarness.send(method: "GET", url: url, headers: token.map { [(field, $0)] } ?? [])
    }


    @Test func onlyVerifiedDevicesGetTokensAndTheRequestBodyIsChecked() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let unsigned = try await GatewayHarness.send(method: "POST", url: harness.base + "/signet/v1/tokens", body: [])
        #expect(unsigned.status == 401 && unsigned.reason == "signature_missing")
        // A shared-secret client has no device to bind a token to.
        let bank = GatewayHarness.Device(
            key: try SigningKey(secret: GatewayHarness.bankSecret),
            keyID: "bank-v1",
            deviceID: "",
            algorithm: HMACSHA256()
        )
        let shared = try await Self.issue(harness, bank)
        #expect(shared.status == 403 && shared.reason == "trust_level_insufficient", "\(shared.text)")
        let device = try await harness.register(.ed25519)
        for body in [#"{"limitedUse":"yes"}"#, #"{"audience":"x"}"#, "[]", "not json"] {
            let answer = try await Self.issue(harness, device, body: body)
            #expect(answer.status == 400 && answer.reason == "malformed_message", "\(body): \(answer.text)")
        }
        // A body is JSON, said so; an empty body needs no type.
        let asForm = try await Self.issue(harness, device, body: #"{"limitedUse":true}"#, contentType: "application/x-www-form-urlencoded")
        #expect(asForm.status == 415 && asForm.reason == "unsupported_media_type", "\(asForm.text)")
        #expect(try await Self.issue(harness, device, body: #"{"limitedUse":false}"#).status == 201)
    }

    @Test func everyBadTokenIsRefusedWithItsReason() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let url = harness.base + "/echo/token/x"
        let missing = try await Self.use(nil, url)
        #expect(missing.status == 401 && missing.reason == "token_missing")
        for garbage in ["", "abc", "a.b.c", "e30.e30.", String(repeating: "a", count: 9000)] {
            let answer = try await Self.use(garbage, url)
            #expect(answer.reason == (garbage.isEmpty ? "token_missing" : "token_invalid"), "\(garbage.prefix(10)): \(answer.status) \(answer.text)")
        }
        let token = try #require(try await Self.issue(harness, device).json["token"] as? String)
        let twice = try await GatewayHarness.send(method: "GET", url: url, headers: [("Signet-Token", token), ("Signet-Token", token)])
        #expect(twice.status == 401 && twice.reason == "token_invalid")

        // Tokens made with the gateway's own key by PyJWT, each wrong in one way.
        let ring = try #require(harness.gateway.tokenIssuer?.ring)
        let now = Int(Date().timeIntervalSince1970)
        let good: [String: Any] = [
            "iss": Self.issuer, "sub": device.deviceID, "aud": ["scores"], "iat": now, "exp": now + 600,
            "jti": "j-\(UUID().uuidString)", "trust_level": "device-key", "key_id": device.keyID,
            "cnf": ["jkt": try device.key.verificationKey.jwk.thumbprint],
        ]
        func variant(_ change: (inout [String: Any]) -> Void) -> [String: Any] {
            var claims = good
            change(&claims)
            return claims
        }
        let signingPEM = ring.signingKey.pemRepresentation
        if PythonPeer.available("jwt, cryptography") {
            let cases: [(String, [String: Any], String)] = [
                ("as issued", good, "200"),
                ("expired", variant { $0["exp"] = now - 120; $0["iat"] = now - 700 }, "token_expired"),
                ("another audience", variant { $0["aud"] = ["other"] }, "token_audience_mismatch"),
                ("another issuer", variant { $0["iss"] = "https://evil.example" }, "token_invalid"),
                ("issued in the future", variant { $0["iat"] = now + 600 }, "token_invalid"),
                ("unknown trust level", variant { $0["trust_level"] = "root" }, "token_invalid"),
                ("another device's key id", variant { $0["key_id"] = "nope" }, "key_revoked"),
                ("no cnf", variant { $0["cnf"] = nil }, "token_invalid"),
            ]
            for (name, claims, expected) in cases {
                let minted = try await Self.mint(claims, pem: signingPEM, kid: ring.signingKID, in: harness.folder)
                let answer = try await Self.use(minted, url)
                #expect((answer.status == 200 ? "200" : answer.reason) == expected, "\(name): \(answer.text)")
            }
            // The right audience for `/echo/token`, the wrong one for `/echo/pay`.
            let scoresOnly = try await Self.mint(good, pem: signingPEM, kid: ring.signingKID, in: harness.folder)
            #expect(try await Self.use(scoresOnly, harness.base + "/echo/pay/x").reason == "token_audience_mismatch")
            // Another key under the gateway's kid; the next key (published, not signing yet) is fine
            // to verify with, but not an unknown kid.
            let stranger = P256.Signing.PrivateKey().pemRepresentation
            #expect(try await Self.use(try await Self.mint(good, pem: stranger, kid: ring.signingKID, in: harness.folder), url).reason == "token_invalid")
            #expect(try await Self.use(try await Self.mint(good, pem: stranger, kid: "other", in: harness.folder), url).reason == "token_invalid")
        }

        // Forms no JOSE library should accept: alg none, HS256 keyed with the public key, a
        // changed payload under the original signature.
        let parts = token.split(separator: ".").map(String.init)
        let noneHeader = Base64.urlEncode(Array(#"{"alg":"none","kid":"\#(ring.signingKID)"}"#.utf8))
        #expect(try await Self.use("\(noneHeader).\(parts[1]).", url).reason == "token_invalid")
        #expect(try await Self.use("\(noneHeader).\(parts[1]).\(parts[2])", url).reason == "token_invalid")
        let hsHeader = Base64.urlEncode(Array(#"{"alg":"HS256","kid":"\#(ring.signingKID)","typ":"JWT"}"#.utf8))
        let publicPEM = ring.signingKey.publicKey.pemRepresentation
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(hsHeader).\(parts[1])".utf8), using: SymmetricKey(data: Array(publicPEM.utf8)))
        #expect(try await Self.use("\(hsHeader).\(parts[1]).\(Base64.urlEncode(Array(mac)))", url).reason == "token_invalid")
        var payload = try #require(try JSONSerialization.jsonObject(with: Data(Base64.urlDecode(parts[1])!)) as? [String: Any])
        payload["trust_level"] = "app-attest"
        let forged = Base64.urlEncode(Array(try JSONSerialization.data(withJSONObject: payload)))
        #expect(try await Self.use("\(parts[0]).\(forged).\(parts[2])", url).reason == "token_invalid")
        let critHeader = Base64.urlEncode(Array(#"{"alg":"ES256","kid":"\#(ring.signingKID)","crit":["x"]}"#.utf8))
        #expect(try await Self.use("\(critHeader).\(parts[1]).\(parts[2])", url).reason == "token_invalid")

        // The device revoked: its token is refused at once on this instance.
        #expect(try await Self.use(token, url).status == 200)
        let revoke = try await GatewayHarness.send(
            method: "DELETE",
            url: harness.base + "/signet/v1/devices/\(device.deviceID)",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(revoke.status == 204)
        let revoked = try await Self.use(token, url)
        #expect(revoked.status == 401 && revoked.reason == "key_revoked")
        #expect(try await Self.issue(harness, device).reason == "key_revoked")
    }

    /// A token signed by PyJWT (`jose_peer.py sign`) with `pem` under `kid`.
    static func mint(_ claims: [String: Any], pem: String, kid: String, in folder: URL) async throws -> String {
        let name = UUID().uuidString
        let keyFile = folder.appendingPathComponent("\(name).pem")
        let claimsFile = folder.appendingPathComponent("\(name).json")
        try Data(pem.utf8).write(to: keyFile)
        try JSONSerialization.data(withJSONObject: claims).write(to: claimsFile)
        return try await PythonPeer.run("jose_peer.py", ["sign", keyFile.path, kid, claimsFile.path])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func keysRotateThroughTheRingAndRetiredKeysLastAsLongAsTheirTokens() async throws {
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("signet-rotation-\(UUID().uuidString)")
        // The store outlives the harnesses (each removes its own folder when it stops).
        let database = keys.appendingPathComponent("signet.sqlite").path
        let first = try await Self.start(keyFolder: keys) { configuration, _ in configuration.store = .sqlite(database) }
        let device = try await first.register(.p256)
        let oldToken = try #require(try await Self.issue(first, device).json["token"] as? String)
        let ring1 = try #require(first.gateway.tokenIssuer?.ring)
        try await first.stop()

        // The rotation: the next key signs, a new next key is made, the old one is retired now.
        func rotated(retiredAt: Date) async throws -> GatewayHarness {
            try await Self.start(keyFolder: keys) { configuration, folder in
                configuration.store = .sqlite(database)
                configuration.tokens?.keyFile = folder.appendingPathComponent("tokens-2.pem").path
                configuration.tokens?.nextKeyFile = folder.appendingPathComponent("tokens-3.pem").path
                configuration.tokens?.retiredKeys = [.init(keyFile: folder.appendingPathComponent("tokens-1.pem").path, retiredAt: retiredAt)]
            }
        }
        let second = try await rotated(retiredAt: Date())
        let ring2 = try #require(second.gateway.tokenIssuer?.ring)
        #expect(ring2.signingKID == ring1.keys[1].kid)
        #expect(ring2.keys.map(\.kid).count == 3 && ring2.keys.map(\.kid).last == ring1.signingKID)
        let jwks = try await GatewayHarness.send(method: "GET", url: second.base + "/signet/v1/jwks")
        #expect((jwks.json["keys"] as? [[String: Any]])?.count == 3)
        #expect(try await Self.use(oldToken, second.base + "/echo/token/x").status == 200)
        let newToken = try #require(try await Self.issue(second, device).json["token"] as? String)
        #expect(try CompactJWTHeader(newToken).kid == ring2.signingKID)
        try await second.stop()

        // Retired longer ago than a token lives: no longer published, its tokens refused.
        let third = try await rotated(retiredAt: Date().addingTimeInterval(-3700))
        Cleanup.after { try await third.stop() }
        let published = try await GatewayHarness.send(method: "GET", url: third.base + "/signet/v1/jwks")
        #expect((published.json["keys"] as? [[String: Any]])?.compactMap { $0["kid"] as? String }.contains(ring1.signingKID) == false)
        #expect(try await Self.use(oldToken, third.base + "/echo/token/x").reason == "token_invalid")
        #expect(try await Self.use(newToken, third.base + "/echo/token/x").status == 200)
    }

    @Test func aLimitedUseTokenWorksOnceOnSQLite() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let token = try #require(try await Self.issue(harness, device, body: #"{"limitedUse":true}"#).json["token"] as? String)
        #expect(try await Self.use(token, harness.base + "/echo/token/x").status == 200)
        let again = try await Self.use(token, harness.base + "/echo/token/x")
        #expect(again.status == 401 && again.reason == "token_replayed")
        // An ordinary token keeps working.
        let ordinary = try #require(try await Self.issue(harness, device).json["token"] as? String)
        for _ in 0..<3 { #expect(try await Self.use(ordinary, harness.base + "/echo/token/x").status == 200) }
    }



    /// `tokens.issueTo` decides who gets a token, by the level of the key that asks: with
    /// `app-attest`, a plain device key is refused and an attested iPhone gets one that carries its
    /// level to every route it opens; with `attested`, Android and debug devices qualify and a shared
    /// secret does not.
    @Test func tokensGoOnlyToKeysOfTheLevelConfigured() async throws {
        let harness = try await Self.start { configuration, _ in
            configuration.tokens?.issueTo = .appAttest
            configuration.allowDebugDevices = true
        }
        Cleanup.after { try await harness.stop() }
        let plain = try await harness.register(.p256)
        let refused = try await Self.issue(harness, plain)
        #expect(refused.status == 403 && refused.reason == "trust_level_insufficient", "\(refused.text)")

        let iPhone = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        let attested = try await harness.attest(iPhone)
        try #require(attested.status == 201)
        let request = try HTTPMessage.request(method: "POST", uri: harness.base + "/signet/v1/tokens")
        let issued = try await GatewayHarness.send(try SimulatedAppAttestSigner(device: iPhone).sign(request, created: Date(), nonce: Nonce.random()))
        let token = try #require(issued.json["token"] as? String, "\(issued.text)")
        let used = try await Self.use(token, harness.base + "/echo/token/x")
        let seen = used.json["headers"] as? [String: String] ?? [:]
        #expect(seen["signet-trust-level"] == "app-attest" && seen["signet-device"] == attested.json["deviceId"] as? String, "\(seen)")
        #expect(seen["signet-key-id"] == iPhone.keyID && seen["signet-token"] == nil, "\(seen)")

        // `attested`: either platform, not a shared secret.
        var running = try #require(harness.gateways[0].reloader.configuration)
        running.tokens?.issueTo = .attested
        try harness.gateways[0].reloader.reload(to: running)
        let android = AndroidGatewayTests.android()
        let registered = try await harness.attestAndroid(android)
        let androidKeyID = try #require(registered.json["keyid"] as? String)
        let androidDevice = GatewayHarness.Device(key: android.signingKey, keyID: androidKeyID, deviceID: "", algorithm: ECDSAP256SHA256())
        #expect(try await Self.issue(harness, androidDevice).status == 201)
        let bank = GatewayHarness.Device(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", deviceID: "", algorithm: HMACSHA256())
        #expect(try await Self.issue(harness, bank).reason == "trust_level_insufficient")
        #expect(try await Self.issue(harness, plain).reason == "trust_level_insufficient")
    }

}
