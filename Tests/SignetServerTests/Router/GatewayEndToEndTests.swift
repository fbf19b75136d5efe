// SPDX-License-Identifier: Apache-2.0
import Crypto
import ExampleScores
import Foundation
import NIOHTTP1
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// The gateway in-process (a router harness), in front of the example backend behind the recording
/// upstream, with a SQLite store.
@Suite(.awaitsCleanups) struct GatewayEndToEndTests {
    @Test func aRegisteredDeviceReachesTheBackendAndTheResponseIsSigned() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        let answer = try await GatewayHarness.send(signed)
        #expect(answer.status == 201, "\(answer.text)")
        #expect(answer.json["player"] as? String == device.deviceID)
        #expect(harness.backend.receivedCount == 1)

        // The response signature verifies only together with the request it answers.
        let verified = try await ResponseSigningRouterTests.verify(answer, answering: signed, harness)
        #expect(verified.covers(.contentDigest))
        let other = try device.signer.sign(
            try harness.scorePost("{\"name\":\"x\",\"score\":1}"),
            created: Date(),
            nonce: "other"
        )
        let error = await #expect(throws: SignetError.self) {
            try await ResponseSigningRouterTests.verify(answer, answering: other, harness)
        }
        #expect(error?.code == .signatureInvalid)
    }

    @Test func theCLIVerifiesTheGatewaysResponseSignature() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.ed25519)
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        let answer = try await GatewayHarness.send(signed)
        try #require(answer.status == 201)
        let folder = harness.folder
        var response = "HTTP/1.1 201 Created\r\n"
        for header in answer.headers { response += "\(header.name): \(header.value)\r\n" }
        try Data((response + "\r\n").utf8 + answer.body).write(to: folder.appendingPathComponent("response.http"))
        try Data(HTTP1MessageCodec().encode(signed)).write(to: folder.appendingPathComponent("request.http"))
        try Data(harness.gatewayKey.verificationKey.pemRepresentation!.utf8).write(
            to: folder.appendingPathComponent("gateway.pub.pem")
        )
        let result = try await SignetProcess.signet(
            [
                "verify", "--request", "response.http", "--response-to", "request.http", "--scheme", "http",
                "--key", "gateway.pub.pem", "--keyid", "gateway", "--label", "gateway",
            ],
            in: folder
        )
        #expect(result.stdout.hasPrefix("valid\n"), "\(result.stdout)\(result.stderr)")
    }

    @Test func everyRejectionIsProblemJSONWithItsReason() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        #expect(try await GatewayHarness.send(signed).status == 201)

        var tampered = signed
        tampered.body = Array("{\"name\":\"Gilgamesh\",\"score\":999}".utf8)
        var forged = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        forged.fields.set(name: "Content-Type", value: "text/plain")
        forged = try forged.replacingSignatureBytes()
        let old = try device.signer.sign(
            try harness.scorePost(),
            created: Date().addingTimeInterval(-3600),
            nonce: Nonce.random()
        )
        let future = try device.signer.sign(
            try harness.scorePost(),
            created: Date().addingTimeInterval(3600),
            nonce: Nonce.random()
        )
        let noNonce = try device.signer.sign(try harness.scorePost(), created: Date())
        let stranger = try MessageSigner(
            key: try SigningKey.generate(.p256),
            keyID: "nobody",
            algorithm: ECDSAP256SHA256()
        )
        .sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        let undigested = try device.signer.sign(
            try harness.scorePost(),
            components: [.method, .targetURI, "content-type"],
            created: Date(),
            nonce: Nonce.random()
        )
        let narrow = try device.signer.sign(
            try harness.scorePost(),
            components: [.method, .contentDigest, "content-type"],
            created: Date(),
            nonce: Nonce.random()
        )
        var garbled = signed
        garbled.fields.set(name: "Signature-Input", value: "sig1=(\"@method\";created=oops")

        let cases: [(String, HTTPMessage, String, Int)] = [
            ("tampered body", tampered, "digest_mismatch", 401),
            ("replay", signed, "nonce_replayed", 401),
            ("unsigned", try harness.scorePost(), "signature_missing", 401),
            ("bad signature", forged, "signature_invalid", 401),
            ("too old", old, "created_too_old", 401),
            ("future", future, "created_in_future", 401),
            ("no nonce", noNonce, "nonce_missing", 401),
            ("unknown key", stranger, "unknown_key", 401),
            ("body without digest", undigested, "digest_missing", 401),
            ("target not covered", narrow, "component_not_covered", 401),
            ("malformed", garbled, "malformed_header", 400),
        ]
        for (name, message, reason, status) in cases {
            let answer = try await GatewayHarness.send(message)
            #expect(answer.status == status, "\(name): \(answer.text)")
            #expect(answer.reason == reason, "\(name): \(answer.text)")
            #expect(answer.headers.first(name: "content-type") == "application/problem+json", "\(name)")
            #expect(answer.json["type"] as? String == "urn:signet:reason:\(reason)", "\(name)")
            #expect(answer.json["title"] is String && answer.json["status"] as? Int == status, "\(name)")
        }
        // Debug mode shows the signature base the gateway built.
        let debug = try await GatewayHarness.send(tampered.withFreshNonce(device))
        #expect((debug.json["signatureBase"] as? String)?.contains("\"@method\": POST") == true)
        #expect(harness.backend.receivedCount == 1)
    }

    @Test func spoofedSignetFieldsAreReplacedByTheVerifiedIdentity() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let request = try HTTPMessage.request(
            method: "GET",
            uri: harness.base + "/echo/headers",
            fields: [("Signet-Device", "dev_admin"), ("Signet-Trust-Level", "app-attest"), ("signet-extra", "x")]
        )
        let answer = try await GatewayHarness.send(
            try device.signer.sign(request, created: Date(), nonce: Nonce.random())
        )
        #expect(answer.status == 200)
        let seen = answer.json as? [String: String] ?? [:]
        #expect(seen["signet-device"] == device.deviceID)
        #expect(seen["signet-trust-level"] == "device-key")
        #expect(seen["signet-key-id"] == device.keyID)
        #expect(seen["signet-extra"] == nil)
        // On an open route the spoofed fields are removed too, and none are added.
        let open = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/scores/top",
            headers: [("Signet-Device", "dev_admin")]
        )
        #expect(open.status == 200)
    }


    @Test func registrationRejectionsAndTheChallengeIsUsedOnce() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let p256 = P256.Signing.PrivateKey()
        let key = try SigningKey(pem: p256.pemRepresentation)
        let devices = harness.base + "/signet/v1/devices"
        let json = [("Content-Type", "application/json")]

        let challenge = try await harness.challenge()
        let wrongProof = try harness.registration(
            key: key,
            alg: "ecdsa-p256-sha256",
            challenge: challenge,
            signature: Array(repeating: 1, count: 64)
        )
        var answer = try await GatewayHarness.send(method: "POST", url: devices, headers: json, body: wrongProof)
        #expect(answer.status == 401 && answer.reason == "signature_invalid", "\(answer.text)")
        // The challenge went with the failed attempt.
        let good = try harness.registration(key: key, alg: "ecdsa-p256-sha256", challenge: challenge)
        answer = try await GatewayHarness.send(method: "POST", url: devices, headers: json, body: good)
        #expect(answer.reason == "challenge_unknown")

        let fresh = try await harness.challenge()
        let zeros = [UInt8](repeating: 0, count: 64)
        let cases: [([UInt8], String, Int)] = [
            (
                try harness.registration(key: key, alg: "ecdsa-p256-sha256", challenge: "never-issued"),
                "challenge_unknown", 401
            ),
            (
                try harness.registration(key: key, alg: "ed25519", challenge: fresh, signature: zeros), "alg_mismatch",
                401
            ),
            (
                try harness.registration(key: key, alg: "hmac-sha256", challenge: fresh, signature: zeros),
                "alg_unsupported", 401
            ),
            (Array("{\"challenge\":1}".utf8), "malformed_message", 400),
            (Array("not json".utf8), "malformed_message", 400),
            (Array(repeating: UInt8(ascii: " "), count: 20_000), "body_too_large", 413),
        ]
        for (body, reason, status) in cases {
            let answer = try await GatewayHarness.send(method: "POST", url: devices, headers: json, body: body)
            #expect(answer.status == status && answer.reason == reason, "\(reason): \(answer.text)")
            // RFC 9110 §15.5.2: every 401 names a scheme.
            #expect((answer.headers.first(name: "WWW-Authenticate") == "Signature") == (status == 401), "\(reason)")
        }
        // DER-encoded P-256 proofs (CryptoKit's derRepresentation) are accepted too. Sent as a form, as
        // text or untyped first: refused with 415 before the body is read, so the challenge is not spent.
        let derChallenge = try await harness.challenge()
        let der = Array(try p256.signature(for: Array(derChallenge.utf8)).derRepresentation)
        let derBody = try harness.registration(key: key, alg: "ecdsa-p256-sha256", challenge: derChallenge, signature: der)
        for headers in [[("Content-Type", "application/x-www-form-urlencoded")], [("Content-Type", "text/plain")], []] {
            answer = try await GatewayHarness.send(method: "POST", url: devices, headers: headers, body: derBody)
            #expect(answer.status == 415 && answer.reason == "unsupported_media_type", "\(headers): \(answer.text)")
        }
        answer = try await GatewayHarness.send(
            method: "POST",
            url: devices,
            headers: json,
            body: derBody
        )
        #expect(answer.status == 201, "\(answer.text)")
        // The same key cannot be registered twice.
        let again = try harness.registration(
            key: key,
            alg: "ecdsa-p256-sha256",
            challenge: try await harness.challenge()
        )
        answer = try await GatewayHarness.send(method: "POST", url: devices, headers: json, body: again)
        #expect(answer.status == 409 && answer.reason == "device_exists")
    }

    @Test func unattestedRegistrationCanBeTurnedOff() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.allowUnattestedDevices = false }
        Cleanup.after { try await harness.stop() }
        let body = try harness.registration(
            key: try SigningKey.generate(.ed25519),
            alg: "ed25519",
            challenge: try await harness.challenge()
        )
        let answer = try await GatewayHarness.send(method: "POST", url: harness.base + "/signet/v1/devices", body: body)
        #expect(answer.status == 403 && answer.reason == "trust_level_insufficient")
    }

    @Test func challengesAreCappedPerSource() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.challengesPerSourcePerMinute = 3 }
        Cleanup.after { try await harness.stop() }
        let window = RestOfWindow()
        for _ in 0..<3 { _ = try await harness.challenge() }
        let answer = try await GatewayHarness.send(method: "POST", url: harness.base + "/signet/v1/challenges")
        #expect(answer.status == 429 && answer.reason == "rate_limited")
        // When to come back: the rest of the source's minute.
        let retryAfter = try #require(answer.headers.first(name: "Retry-After").flatMap { Int($0) })
        #expect(window.admits(retryAfter), "\(retryAfter)")
    }

    /// Issue 25: 10,000 challenges from 180 sources filled `maxOutstandingChallenges` and every new
    /// device got 429 for two minutes. Challenges are stateless now: issuing one writes only its
    /// source's count (one row per source and window, shared by every instance), so no number of
    /// them locks anyone else out, and only a used challenge is stored (as a claim).
    @Test func aFloodOfChallengesStoresNothingAndLocksNoDeviceOut() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.challengesPerSourcePerMinute = 1_000_000 }
        Cleanup.after { try await harness.stop() }
        let base = harness.base
        let issued = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var issued = 0
                    for _ in 0..<125 {
                        let answer = try await GatewayHarness.send(method: "POST", url: base + "/signet/v1/challenges")
                        if answer.status == 201 { issued += 1 }
                    }
                    return issued
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(issued == 1_000)
        let later = Date().addingTimeInterval(600)
        #expect(try await harness.store.sweep(now: later) == 1, "1,000 challenges from one source stored its one count")
        // The flood spent the limit's store budget for this second (250 operations): a second on,
        // the next challenge is counted in the store again.
        try await Task.sleep(for: .seconds(1))
        _ = try await harness.register()
        #expect(try await harness.store.sweep(now: later) == 2, "the used challenge's one claim, and the source's new count")
    }


    /// Key ids that resolve to nothing are remembered for a moment (so unknown keys cost one store
    /// read, not one per request), but a registration through the instance is seen at once.
    @Test func aKeyRefusedAsUnknownWorksAsSoonAsItIsRegistered() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let key = try SigningKey.generate(.p256)
        var jwk = key.verificationKey.jwk
        let keyID = try jwk.thumbprint
        jwk.kid = keyID
        let signer = MessageSigner(key: key, keyID: keyID, algorithm: ECDSAP256SHA256())
        let early = try await GatewayHarness.send(try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random()))
        #expect(early.status == 401 && early.reason == "unknown_key", "\(early.text)")
        let registered = try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/devices",
            headers: [("Content-Type", "application/json")],
            body: try harness.registration(key: key, alg: "ecdsa-p256-sha256", challenge: try await harness.challenge())
        )
        #expect(registered.status == 201 && registered.json["keyid"] as? String == keyID, "\(registered.text)")
        let after = try await GatewayHarness.send(try signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random()))
        #expect(after.status == 201, "\(after.text)")
    }

    @Test func aChallengePastItsLifetimeIsExpired() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.challengeTTLSeconds = 1 }
        Cleanup.after { try await harness.stop() }
        let challenge = try await harness.challenge()
        try await Task.sleep(for: .milliseconds(1_100))
        let answer = try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/devices",
            headers: [("Content-Type", "application/json")],
            body: try harness.registration(key: try SigningKey.generate(.p256), alg: "ecdsa-p256-sha256", challenge: challenge)
        )
        #expect(answer.status == 401 && answer.reason == "challenge_expired", "\(answer.text)")
    }

    @Test func revokedDevicesAreRefusedAndTheAdminAPINeedsItsToken() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let revoke = harness.base + "/signet/v1/devices/\(device.deviceID)"
        var answer = try await GatewayHarness.send(
            method: "DELETE",
            url: revoke,
            headers: [("Authorization", "Bearer wrong")]
        )
        #expect(answer.status == 401 && answer.reason == "admin_unauthorized")
        #expect(answer.headers.first(name: "WWW-Authenticate") == "Bearer")
        answer = try await GatewayHarness.send(
            method: "DELETE",
            url: revoke,
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(answer.status == 204)
        answer = try await GatewayHarness.send(
            method: "DELETE",
            url: harness.base + "/signet/v1/devices/dev_none",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(answer.status == 404 && answer.reason == "not_found")
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        answer = try await GatewayHarness.send(signed)
        #expect(answer.status == 401 && answer.reason == "key_revoked")
        // Registering the revoked key again says it is revoked (not that a device exists).
        answer = try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/devices",
            headers: [("Content-Type", "application/json")],
            body: try harness.registration(key: device.key, alg: "ecdsa-p256-sha256", challenge: try await harness.challenge())
        )
        #expect(answer.status == 401 && answer.reason == "key_revoked" && answer.text.contains("make a new key"), "\(answer.text)")
        // The admin API's revocation is in the audit log, under the token's name (never the token),
        // and the refused attempts are not.
        let audit = try await harness.store.auditRecords(before: nil, limit: 10)
        #expect(audit.map(\.action) == ["device.revoke"] && audit.first?.target == device.deviceID)
        #expect(audit.first?.actor == AdminToken(GatewayHarness.adminToken).actor && audit.first?.source == "127.0.0.1")
        #expect(audit.first?.actor.contains(GatewayHarness.adminToken) == false)
    }

    @Test func routesDemandTheirTrustLevel() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let request = try HTTPMessage.request(method: "GET", uri: harness.base + "/attested/vault")
        let answer = try await GatewayHarness.send(
            try device.signer.sign(request, created: Date(), nonce: Nonce.random())
        )
        #expect(answer.status == 403 && answer.reason == "trust_level_insufficient")
    }

    @Test func sharedSecretClientsAndTheLegacyScheme() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let bank = MessageSigner(
            key: try SigningKey(secret: GatewayHarness.bankSecret),
            keyID: "bank-v1",
            algorithm: HMACSHA256()
        )
        let answer = try await GatewayHarness.send(
            try bank.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        )
        #expect(answer.status == 201 && answer.json["player"] as? String == "bank-v1")

        let legacy = LegacyQueryHMAC(key: GatewayHarness.legacySecret)
        let query = legacy.query(for: "{\"name\":\"Enkidu\",\"score\":90}")
        var result = try await GatewayHarness.send(method: "GET", url: harness.base + "/legacy/score?" + query)
        #expect(result.status == 201)
        let badQuery = query.replacingOccurrences(of: "90", with: "99")
        result = try await GatewayHarness.send(method: "GET", url: harness.base + "/legacy/score?" + badQuery)
        #expect(result.status == 401 && result.reason == "signature_invalid")
    }

    @Test func oversizedBodiesAndAnUnreachableUpstreamAreProblemsToo() async throws {
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.maxBodyBytes = 64
            $0.upstreamTimeoutSeconds = 30
        }
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let big = "{\"name\":\"" + String(repeating: "x", count: 100) + "\",\"score\":1}"
        let large = try device.signer.sign(try harness.scorePost(big), created: Date(), nonce: Nonce.random())
        let tooLarge = try await GatewayHarness.send(large)
        #expect(tooLarge.status == 413 && tooLarge.reason == "body_too_large", "\(tooLarge.text)")
        await harness.backendServer.stop()
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        let started = ContinuousClock.now
        let down = try await GatewayHarness.send(signed)
        // A refused connection is answered at once (not after the 30 s upstream timeout), as a 502
        // with its own code and no system error text.
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(down.status == 502 && down.reason == "upstream_unreachable", "\(down.text)")
        #expect(!down.text.contains("errno") && !down.text.contains("refused ("), "\(down.text)")
    }

    @Test func healthReadinessAndMetricsBehindTheAdminToken() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/healthz").text == "ok\n")
        let ready = try await GatewayHarness.readiness(harness.base + "/readyz")
        #expect(ready.status == 200 && ready.json["status"] as? String == "ready", "\(ready.text)")
        _ = try await GatewayHarness.send(try harness.scorePost())
        // Not the public's: without the admin token, refused (and counted as a failed admin attempt).
        let anonymous = try await GatewayHarness.send(method: "GET", url: harness.base + "/metrics")
        #expect(anonymous.status == 401 && anonymous.reason == "admin_unauthorized", "\(anonymous.text)")
        let metrics = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/metrics",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        ).text
        #expect(
            metrics.contains("signet_requests_total{outcome=\"rejected\",reason=\"signature_missing\"} 1"),
            "\(metrics)"
        )
        // Readiness follows the upstream: down, 503 naming it, while liveness stays ok.
        await harness.backendServer.stop()
        try await Task.sleep(for: .milliseconds(1_100))
        let down = try await GatewayHarness.send(method: "GET", url: harness.base + "/readyz")
        #expect(down.status == 503 && down.json["upstream"] as? String == "unreachable" && down.json["store"] as? String == "ok")
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/healthz").status == 200)
    }

    /// A client that signed another URL than the one the gateway checks (here the loopback address,
    /// where the gateway is configured as api.example.com) learns which, without debug mode.
    @Test func aSignatureOverAnotherURLSaysWhichURLTheGatewayVerified() async throws {
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.publicScheme = "https"
            $0.publicAuthority = "api.example.com"
            $0.debug = false
        }
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register()
        let answer = try await GatewayHarness.send(try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random()))
        #expect(answer.status == 401 && answer.reason == "signature_invalid", "\(answer.text)")
        let detail = try #require(answer.json["detail"] as? String)
        #expect(detail.contains("@scheme https") && detail.contains("@authority api.example.com"), "\(detail)")
        #expect(detail.contains("@target-uri https://api.example.com/scores"), "\(detail)")
        #expect(answer.json["signatureBase"] == nil, "the base itself stays a debug aid")
    }

    @Test func withoutAnAdminTokenThereAreNoMetricsAndAShortTokenDoesNotStart() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.adminToken = nil }
        Cleanup.after { try await harness.stop() }
        let metrics = try await GatewayHarness.send(method: "GET", url: harness.base + "/metrics")
        #expect(metrics.status == 404 && metrics.reason == "not_found")

        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:9")
        configuration.store = .memory
        configuration.adminToken = "change-me"
        let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(error?.path == "adminToken" && error?.message.contains("32") == true, "\(String(describing: error))")
        configuration.development = true
        try configuration.validate()
    }
}

extension HTTPMessage {
    /// The same message with its signature bytes replaced by zeros of the same length.
    func replacingSignatureBytes() throws -> HTTPMessage {
        var copy = self
        let value = try #require(copy.fields["signature"])
        let label = value.prefix { $0 != "=" }
        copy.fields.set(name: "Signature", value: "\(label)=:\(Base64.encode([UInt8](repeating: 0, count: 64))):")
        return copy
    }

    func withFreshNonce(_ device: GatewayHarness.Device) throws -> HTTPMessage {
        var original = self
        let body = original.body
        original.fields.removeAll("signature")
        original.fields.removeAll("signature-input")
        original.fields.removeAll("content-digest")
        original.body = Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
        var signed = try device.signer.sign(original, created: Date(), nonce: Nonce.random())
        signed.body = body
        return signed
    }
}
