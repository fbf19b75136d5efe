// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import NIOHTTP1
import SignetCore
import SignetServer
import SignetSimulator
import SignetTestSupport
import Testing

/// The gateway as an OAuth Client Attester (draft-ietf-oauth-attestation-based-client-auth-11):
/// verified devices get Client Attestation JWTs bound to their key; `client-attestation` routes
/// take a request with an attestation and a PoP by the attested key, each PoP once; every way
/// either can be wrong is refused with its own code and the draft's OAuth error; a challenge route
/// hands out challenges and takes PoPs that carry one.
@Suite(.awaitsCleanups) struct ClientAttestationTests {
    static let clientID = "com.example.scores"
    static let audience = "https://api.example.com"
    /// What a PoP of a device's consent to attest a key it names is for.
    static let consent = AppTokenTests.issuer + "/signet/v1/client-attestations"

    static func start(
        clock: ManualClock? = nil,
        transport: GatewayHarness.Transport = .router,
        adjust: @escaping (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-attester-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try await GatewayHarness.start(transport: transport, clock: clock) { configuration in
            configuration.tokens = .init(issuer: AppTokenTests.issuer, audience: ["scores"], keyFile: folder.appendingPathComponent("tokens.pem").path)
            configuration.clientAttestation = .init(clientId: clientID, audience: audience)
            configuration.routes.insert(contentsOf: [
                .init(prefix: "/echo/attested", access: .init(mode: "client-attestation")),
                .init(prefix: "/echo/challenged", access: .init(mode: "client-attestation", options: ["attestationChallenge": .bool(true)])),
                .init(prefix: "/echo/passed", access: .init(mode: "client-attestation", options: ["forwardAttestation": .bool(true), "audience": .string("https://as.example.com")])),
                .init(prefix: "/echo/watched", access: .init(mode: "client-attestation", options: ["attestationChallenge": .bool(true)]), mode: .monitor),
            ], at: 0)
            adjust(&configuration)
        }
    }

    /// Asks for an attestation with `device`'s signature, with `body` when given.
    static func attest(_ harness: GatewayHarness, _ device: GatewayHarness.Device, body: String = "", pop: String? = nil) async throws -> GatewayHarness.Answer {
        var fields: MessageFields = body.isEmpty ? [] : [("Content-Type", "application/json")]
        if let pop { fields.append(name: "OAuth-Client-Attestation-PoP", value: pop) }
        let request = try HTTPMessage.request(
            method: "POST",
            uri: harness.base + "/signet/v1/client-attestations",
            fields: fields,
            body: Array(body.utf8)
        )
        return try await GatewayHarness.send(try device.signer.sign(request, created: Date(), nonce: Nonce.random()))
    }

    static func attestation(_ harness: GatewayHarness, _ device: GatewayHarness.Device) async throws -> String {
        let answer = try await attest(harness, device)
        return try #require(answer.json["attestation"] as? String, "\(answer.text)")
    }

    static func pop(_ key: SigningKey, audience: String = audience, challenge: String? = nil, now: Date = Date(), jti: String? = nil) throws -> String {
        try ClientAttestationPoP.make(key: key, audience: audience, challenge: challenge, now: now, jti: jti)
    }

    static func send(_ url: String, _ fields: [(String, String)]) async throws -> GatewayHarness.Answer {
        try await GatewayHarness.send(method: "GET", url: url, headers: fields)
    }

    static func claims(of jwt: String) throws -> (header: [String: Any], claims: [String: Any]) {
        let parts = jwt.split(separator: ".").map(String.init)
        let header = try JSONSerialization.jsonObject(with: Data(Base64.urlDecode(parts[0]) ?? [])) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: Data(Base64.urlDecode(parts[1]) ?? [])) as? [String: Any]
        return (header ?? [:], claims ?? [:])
    }

    /// An Android device registered with Key Attestation gets an attestation that says so
    /// (`trust_level`, `platform`) of its attested key; where only attested devices are attested
    /// (`issueTo`), its PoPs pass an attestation route as that device and a device key is refused.
    @Test func anAndroidDeviceGetsAnAttestationOfItsAttestedKey() async throws {
        let harness = try await Self.start { $0.clientAttestation?.issueTo = .androidKeyAttestation }
        Cleanup.after { try await harness.stop() }
        let android = SimulatedAndroidDevice(ca: GatewayHarness.androidCA)
        let registered = try await harness.attestAndroid(android)
        try #require(registered.status == 201, "\(registered.text)")
        let device = GatewayHarness.Device(
            key: android.signingKey,
            keyID: try #require(registered.json["keyid"] as? String),
            deviceID: try #require(registered.json["deviceId"] as? String),
            algorithm: ECDSAP256SHA256()
        )
        let jwt = try await Self.attestation(harness, device)
        let (_, claims) = try Self.claims(of: jwt)
        #expect(claims["trust_level"] as? String == "android-key-attestation" && claims["platform"] as? String == "android", "\(claims)")
        #expect(claims["device_id"] as? String == device.deviceID && claims["sub"] as? String == Self.clientID)
        let cnf = try #require((claims["cnf"] as? [String: Any])?["jwk"] as? [String: Any])
        #expect(cnf["x"] as? String == android.signingKey.verificationKey.jwk.x && cnf["y"] as? String == android.signingKey.verificationKey.jwk.y)

        let accepted = try await Self.send(
            harness.base + "/echo/attested/x", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(android.signingKey))])
        #expect(accepted.status == 200, "\(accepted.text)")
        let seen = accepted.json["headers"] as? [String: String] ?? [:]
        #expect(seen["signet-device"] == device.deviceID && seen["signet-trust-level"] == "android-key-attestation", "\(seen)")

        // A device key is not attested where only Android devices are.
        let plain = try await Self.attest(harness, try await harness.register(.p256))
        #expect(plain.status == 403, "\(plain.text)")
    }

    @Test func aVerifiedDeviceGetsAnAttestationOfItsKeyOrOfTheKeyItNames() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let answer = try await Self.attest(harness, device)
        #expect(answer.status == 201 && answer.headers["Cache-Control"].first == "no-store", "\(answer.text)")
        #expect(answer.json["clientId"] as? String == Self.clientID)
        let jwt = try #require(answer.json["attestation"] as? String)
        let (header, claims) = try Self.claims(of: jwt)
        #expect(header["typ"] as? String == "oauth-client-attestation+jwt" && header["alg"] as? String == "ES256" && header["kid"] != nil)
        #expect(claims["iss"] as? String == AppTokenTests.issuer && claims["sub"] as? String == Self.clientID)
        #expect(claims["device_id"] as? String == device.deviceID && claims["key_id"] as? String == device.keyID)
        #expect(claims["trust_level"] as? String == "device-key" && claims["platform"] == nil)
        let cnf = try #require((claims["cnf"] as? [String: Any])?["jwk"] as? [String: Any])
        #expect(cnf["x"] as? String == device.key.verificationKey.jwk.x && cnf["d"] == nil)
        let exp = try #require(claims["exp"] as? Double), iat = try #require(claims["iat"] as? Double)
        #expect(exp - iat == 3600)

        // A key the body names is attested instead, with a PoP by it for the attester, once; a
        // private key, or anything else, is refused.
        let instance = try SigningKey.generate(.ed25519)
        let namedBody = #"{"jwk":\#(instance.verificationKey.jwk.jsonString)}"#
        #expect(try await Self.attest(harness, device, body: namedBody).reason == "client_attestation_pop_invalid")
        let strangers = try Self.pop(try SigningKey.generate(.ed25519), audience: Self.consent)
        #expect(try await Self.attest(harness, device, body: namedBody, pop: strangers).reason == "client_attestation_pop_invalid")
        #expect(try await Self.attest(harness, device, body: namedBody, pop: try Self.pop(instance)).reason == "client_attestation_pop_invalid")
        // A PoP for the attester's own name, or for the route's audience, is no consent.
        #expect(try await Self.attest(harness, device, body: namedBody, pop: try Self.pop(instance, audience: AppTokenTests.issuer)).reason == "client_attestation_pop_invalid")
        let consent = try Self.pop(instance, audience: Self.consent)
        let named = try await Self.attest(harness, device, body: namedBody, pop: consent)
        #expect(try await Self.attest(harness, device, body: namedBody, pop: consent).reason == "client_attestation_pop_replayed")
        let namedJWT = try #require(named.json["attestation"] as? String, "\(named.text)")
        let namedJWK = try #require((try Self.claims(of: namedJWT).claims["cnf"] as? [String: Any])?["jwk"] as? [String: Any])
        #expect(namedJWK["kty"] as? String == "OKP" && namedJWK["x"] as? String == instance.verificationKey.jwk.x, "\(named.text)")
        var privateJWK = instance.verificationKey.jwk
        privateJWK.d = "AAAA"
        #expect(try await Self.attest(harness, device, body: #"{"jwk":\#(privateJWK.jsonString)}"#, pop: try Self.pop(instance, audience: Self.consent)).reason == "invalid_key")
        #expect(try await Self.attest(harness, device, body: #"{"key":1}"#).reason == "malformed_message")
        #expect(try await Self.attest(harness, device, body: #"{"jwk":{"kty":"oct","k":"AAAA"}}"#).status == 400)

        // Unsigned: no attestation.
        let unsigned = try await GatewayHarness.send(method: "POST", url: harness.base + "/signet/v1/client-attestations", headers: [])
        #expect(unsigned.status == 401 && unsigned.reason == "signature_missing", "\(unsigned.text)")
    }

    /// An App Attest key signs only assertions: the device names a key of its own to be attested,
    /// under its assertion over the body.
    @Test func anAppAttestDeviceHasTheKeyItNamesAttested() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let iPhone = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        try #require(try await harness.attest(iPhone).status == 201)
        let signer = SimulatedAppAttestSigner(device: iPhone)
        let bare = try HTTPMessage.request(method: "POST", uri: harness.base + "/signet/v1/client-attestations")
        let refused = try await GatewayHarness.send(try signer.sign(bare, created: Date(), nonce: Nonce.random()))
        #expect(refused.reason == "alg_unsupported", "\(refused.text)")

        let instance = try SigningKey.generate(.p256)
        let body = Array(#"{"jwk":\#(instance.verificationKey.jwk.jsonString)}"#.utf8)
        let request = try HTTPMessage.request(
            method: "POST",
            uri: harness.base + "/signet/v1/client-attestations",
            fields: [("Content-Type", "application/json"), ("OAuth-Client-Attestation-PoP", try Self.pop(instance, audience: Self.consent))],
            body: body
        )
        let answer = try await GatewayHarness.send(try signer.sign(request, created: Date(), nonce: Nonce.random()))
        let jwt = try #require(answer.json["attestation"] as? String, "\(answer.text)")
        let claims = try Self.claims(of: jwt).claims
        #expect(claims["trust_level"] as? String == "app-attest" && claims["platform"] as? String == "ios")
        let used = try await Self.send(harness.base + "/echo/attested/x", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(instance))])
        let seen = used.json["headers"] as? [String: String] ?? [:]
        #expect(used.status == 200 && seen["signet-trust-level"] == "app-attest" && seen["signet-key-id"] == iPhone.keyID, "\(used.text)")
    }

    @Test func aRouteTakesAnAttestationWithAPoPByItsKeyOnce() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let jwt = try await Self.attestation(harness, device)
        let url = harness.base + "/echo/attested/x"

        let pop = try Self.pop(device.key)
        let accepted = try await Self.send(url, [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", pop)])
        #expect(accepted.status == 200, "\(accepted.text)")
        let seen = accepted.json["headers"] as? [String: String] ?? [:]
        #expect(seen["signet-device"] == device.deviceID && seen["signet-app-id"] == Self.clientID && seen["signet-trust-level"] == "device-key", "\(seen)")
        // The attestation and its proof stay at the gateway.
        #expect(seen["oauth-client-attestation"] == nil && seen["oauth-client-attestation-pop"] == nil, "\(seen)")

        let replayed = try await Self.send(url, [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", pop)])
        #expect(replayed.status == 401 && replayed.reason == "client_attestation_pop_replayed", "\(replayed.text)")
        #expect(replayed.json["error"] as? String == "invalid_client_attestation")
        #expect(replayed.headers["WWW-Authenticate"].first == #"OAuth-Client-Attestation error="invalid_client_attestation""#)

        // Each way an attestation or its proof can be wrong.
        let stranger = try SigningKey.generate(.p256)
        let appToken = try #require(try await AppTokenTests.issue(harness, device).json["token"] as? String)
        let (header, _) = try Self.claims(of: jwt)
        let parts = jwt.split(separator: ".").map(String.init)
        var claims = try Self.claims(of: jwt).claims
        claims["sub"] = "com.example.other"
        let resubbed = parts[0] + "." + Base64.urlEncode(Array(try JSONSerialization.data(withJSONObject: claims))) + "." + parts[2]
        var jwtHeader = header
        jwtHeader["typ"] = "JWT"
        let retyped = Base64.urlEncode(Array(try JSONSerialization.data(withJSONObject: jwtHeader))) + "." + parts[1] + "." + parts[2]
        let cases: [(String, [(String, String)], String)] = [
            ("nothing", [], "client_attestation_missing"),
            ("no PoP", [("OAuth-Client-Attestation", jwt)], "client_attestation_missing"),
            ("no attestation", [("OAuth-Client-Attestation-PoP", try Self.pop(device.key))], "client_attestation_missing"),
            ("two PoPs", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key)), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key))], "client_attestation_invalid"),
            ("an app token as the attestation", [("OAuth-Client-Attestation", appToken), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key))], "client_attestation_invalid"),
            ("another typ", [("OAuth-Client-Attestation", retyped), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key))], "client_attestation_invalid"),
            ("another client id", [("OAuth-Client-Attestation", resubbed), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key))], "client_attestation_invalid"),
            ("a PoP by another key", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(stranger))], "client_attestation_pop_invalid"),
            ("a PoP for another audience", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key, audience: "https://elsewhere.example"))], "client_attestation_pop_invalid"),
            ("a PoP made an hour ago", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key, now: Date().addingTimeInterval(-3600)))], "client_attestation_pop_stale"),
            ("a PoP from the future", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key, now: Date().addingTimeInterval(600)))], "client_attestation_pop_stale"),
            ("a DPoP proof as the PoP", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try DPoPProof.make(key: device.key, method: "GET", url: url, accessToken: nil, now: Date()))], "client_attestation_pop_invalid"),
            ("garbage", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", "a.b.c")], "client_attestation_pop_invalid"),
        ]
        for (name, fields, expected) in cases {
            let answer = try await Self.send(url, fields)
            #expect(answer.status == 401 && answer.reason == expected, "\(name): \(answer.text)")
        }

        // A route with its own audience, which passes the attestation on to the server behind it.
        let passed = try await Self.send(
            harness.base + "/echo/passed/x",
            [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key, audience: "https://as.example.com"))]
        )
        let passedSeen = passed.json["headers"] as? [String: String] ?? [:]
        #expect(passed.status == 200 && passedSeen["oauth-client-attestation"] == jwt && passedSeen["oauth-client-attestation-pop"] != nil, "\(passed.text)")

        // The device revoked: its attestation is refused at once.
        let revoke = try await GatewayHarness.send(
            method: "DELETE",
            url: harness.base + "/signet/v1/devices/\(device.deviceID)",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(revoke.status == 204)
        let revoked = try await Self.send(url, [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key))])
        #expect(revoked.status == 401 && revoked.reason == "client_attestation_invalid", "\(revoked.text)")
    }

    @Test func anExpiredAttestationAsksForAFreshOne() async throws {
        let clock = ManualClock()
        let harness = try await Self.start(clock: clock) { $0.clientAttestation?.ttlSeconds = 300 }
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let jwt = try await Self.attestation(harness, device)
        clock.advance(by: 400)
        let answer = try await Self.send(harness.base + "/echo/attested/x", [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key, now: clock.now))])
        #expect(answer.status == 401 && answer.reason == "client_attestation_expired", "\(answer.text)")
        #expect(answer.json["error"] as? String == "use_fresh_attestation")
    }

    @Test func aChallengeRouteHandsOutChallengesAndTakesPoPsThatCarryOne() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.ed25519)
        let jwt = try await Self.attestation(harness, device)
        let url = harness.base + "/echo/challenged/x"

        let first = try await Self.send(url, [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key))])
        #expect(first.status == 401 && first.reason == "client_attestation_challenge_required", "\(first.text)")
        #expect(first.json["error"] as? String == "use_attestation_challenge")
        #expect(first.headers["WWW-Authenticate"].first == #"OAuth-Client-Attestation error="use_attestation_challenge""#)
        let handed = try #require(first.headers["OAuth-Client-Attestation-Challenge"].first)

        // The challenge endpoint (§7.1) gives one too, never cached.
        let endpoint = try await GatewayHarness.send(method: "POST", url: harness.base + "/signet/v1/attestation-challenge", headers: [])
        #expect(endpoint.status == 200 && endpoint.headers["Cache-Control"].first == "no-store", "\(endpoint.text)")
        let fetched = try #require(endpoint.json["attestation_challenge"] as? String)

        for challenge in [handed, fetched] {
            let answer = try await Self.send(url, [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key, challenge: challenge))])
            #expect(answer.status == 200, "\(answer.text)")
            // Every answer hands out the next one.
            #expect(answer.headers["OAuth-Client-Attestation-Challenge"].first != nil)
        }
        // A forged challenge, or a DPoP nonce of this gateway's, is no challenge.
        let forged = try await Self.send(url, [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key, challenge: "x" + handed.dropFirst()))])
        #expect(forged.reason == "client_attestation_challenge_required" && forged.headers["OAuth-Client-Attestation-Challenge"].first != nil)
    }

    /// The draft's combined mode (-11 §5.2): a DPoP proof by the attested key stands in for the
    /// PoP, checked as RFC 9449 says, claimed once, carrying a DPoP nonce where the route asks
    /// for challenges.
    @Test func aDPoPProofByTheAttestedKeyStandsInForThePoP() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let jwt = try await Self.attestation(harness, device)
        let url = harness.base + "/echo/attested/x"
        func dpop(_ key: SigningKey, _ url: String, method: String = "GET", nonce: String? = nil) throws -> String {
            try DPoPProof.make(key: key, method: method, url: url, accessToken: nil, nonce: nonce, now: Date())
        }
        let proof = try dpop(device.key, url)
        let accepted = try await Self.send(url, [("OAuth-Client-Attestation", jwt), ("DPoP", proof)])
        let seen = accepted.json["headers"] as? [String: String] ?? [:]
        #expect(accepted.status == 200 && seen["signet-device"] == device.deviceID, "\(accepted.text)")
        #expect(seen["dpop"] == nil && seen["oauth-client-attestation"] == nil, "\(seen)")
        let cases: [(String, [(String, String)], String)] = [
            ("the same proof again", [("OAuth-Client-Attestation", jwt), ("DPoP", proof)], "dpop_proof_replayed"),
            ("a proof by another key", [("OAuth-Client-Attestation", jwt), ("DPoP", try dpop(try SigningKey.generate(.p256), url))], "client_attestation_pop_invalid"),
            ("a proof for another URL", [("OAuth-Client-Attestation", jwt), ("DPoP", try dpop(device.key, url + "y"))], "dpop_proof_invalid"),
            ("a proof for another method", [("OAuth-Client-Attestation", jwt), ("DPoP", try dpop(device.key, url, method: "POST"))], "dpop_proof_invalid"),
            ("a proof without its attestation", [("DPoP", try dpop(device.key, url))], "client_attestation_missing"),
        ]
        for (name, fields, expected) in cases {
            let answer = try await Self.send(url, fields)
            #expect(answer.status == 401 && answer.reason == expected, "\(name): \(answer.text)")
        }
        // On a challenge route the proof carries a DPoP nonce (draft -11 §5.2: the challenge is the
        // PoP's, never a DPoP proof's), refused with RFC 9449's `use_dpop_nonce` and a fresh one.
        let challenged = harness.base + "/echo/challenged/x"
        let first = try await Self.send(challenged, [("OAuth-Client-Attestation", jwt), ("DPoP", try dpop(device.key, challenged))])
        #expect(first.status == 401 && first.reason == "dpop_nonce_required", "\(first.text)")
        #expect(first.headers["WWW-Authenticate"].first?.hasPrefix("DPoP error=\"use_dpop_nonce\"") == true, "\(first.headers)")
        // The attestation challenge comes on every answer of the route all the same (§6.2).
        #expect(first.headers["OAuth-Client-Attestation-Challenge"].first != nil)
        let nonce = try #require(first.headers["DPoP-Nonce"].first)
        // An attestation challenge is no DPoP nonce.
        let endpoint = try await GatewayHarness.send(method: "POST", url: harness.base + "/signet/v1/attestation-challenge")
        let challenge = try #require(endpoint.json["attestation_challenge"] as? String)
        let mistaken = try await Self.send(challenged, [("OAuth-Client-Attestation", jwt), ("DPoP", try dpop(device.key, challenged, nonce: challenge))])
        #expect(mistaken.reason == "dpop_nonce_required", "\(mistaken.text)")
        let second = try await Self.send(challenged, [("OAuth-Client-Attestation", jwt), ("DPoP", try dpop(device.key, challenged, nonce: nonce))])
        #expect(second.status == 200, "\(second.text)")
        // The challenge endpoint hands out a DPoP nonce too (§6.3), which a proof can carry at once.
        let handed = try #require(endpoint.headers["DPoP-Nonce"].first, "\(endpoint.headers)")
        let third = try await Self.send(challenged, [("OAuth-Client-Attestation", jwt), ("DPoP", try dpop(device.key, challenged, nonce: handed))])
        #expect(third.status == 200, "\(third.text)")
    }

    /// A monitored route forwards with the verdict, never with the attestation or its PoP, and
    /// never the challenge a refusal hands out.
    @Test func aMonitoredRouteForwardsWithTheVerdictAndWithoutTheAttestation() async throws {
        let harness = try await Self.start()
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let jwt = try await Self.attestation(harness, device)
        let url = harness.base + "/echo/watched/x"
        let unchallenged = try await Self.send(url, [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key))])
        let seen = unchallenged.json["headers"] as? [String: String] ?? [:]
        #expect(unchallenged.status == 200 && seen["signet-verdict"] == "client_attestation_challenge_required", "\(unchallenged.text)")
        #expect(seen["oauth-client-attestation"] == nil && seen["oauth-client-attestation-pop"] == nil, "\(seen)")
        let challenge = try #require(unchallenged.headers["OAuth-Client-Attestation-Challenge"].first, "\(unchallenged.headers)")
        let accepted = try await Self.send(url, [("OAuth-Client-Attestation", jwt), ("OAuth-Client-Attestation-PoP", try Self.pop(device.key, challenge: challenge))])
        #expect((accepted.json["headers"] as? [String: String])?["signet-verdict"] == "accepted", "\(accepted.text)")
    }

    @Test func theConfigurationIsChecked() async throws {
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.clientAttestation = .init(clientId: Self.clientID, audience: Self.audience)
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.tokens = .init(issuer: AppTokenTests.issuer, audience: ["scores"], keyFile: "/tmp/signet-unused.pem")
        try configuration.validate()
        for bad in [{ (c: inout GatewayConfiguration) in c.clientAttestation?.ttlSeconds = 100_000 },
                    { $0.clientAttestation?.popLifetime = 1 },
                    { $0.clientAttestation?.challengeLifetime = 5 },
                    { $0.clientAttestation?.clientId = "" },
                    { $0.clientAttestation?.audience = "" },
                    { $0.clientAttestation?.issueTo = .clientCertificate },
                    // Longer than a retired token key stays published.
                    { $0.clientAttestation?.ttlSeconds = 7200 },
                    // The audience of a device's consent to attest a key.
                    { $0.clientAttestation?.audience = Self.consent }] {
            var changed = configuration
            bad(&changed)
            #expect(throws: ConfigurationError.self) { try changed.validate() }
        }
        var route = configuration
        route.clientAttestation = nil
        route.routes.insert(.init(prefix: "/a", access: .init(mode: "client-attestation")), at: 0)
        #expect(throws: ConfigurationError.self) { try route.validate() }
        var option = configuration
        option.routes.insert(.init(prefix: "/a", access: .init(mode: "client-attestation", options: ["dpop": .bool(true)])), at: 0)
        #expect(throws: ConfigurationError.self) { try option.validate() }
        var consentRoute = configuration
        consentRoute.routes.insert(.init(prefix: "/a", access: .init(mode: "client-attestation", options: ["audience": .string(Self.consent)])), at: 0)
        #expect(throws: ConfigurationError.self) { try consentRoute.validate() }
    }
}
