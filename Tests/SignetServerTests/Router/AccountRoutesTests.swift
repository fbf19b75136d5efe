// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import NIOHTTP1
import SignetCore
import SignetServer
import SignetStore
import SignetSimulator
import SignetTestSupport
import Testing

/// `PUT`/`DELETE /signet/v1/users/{name}`: the admin token or nothing, bodies and names checked,
/// and what a registration after a login binds.
@Suite(.awaitsCleanups) struct AccountRoutesTests {
    static func put(
        _ harness: GatewayHarness,
        _ segment: String,
        body: String,
        token: String? = GatewayHarness.adminToken,
        contentType: String? = "application/json"
    ) async throws -> GatewayHarness.Answer {
        try await GatewayHarness.send(
            method: "PUT",
            url: harness.base + "/signet/v1/users/" + segment,
            headers: (token.map { [("Authorization", "Bearer \($0)")] } ?? []) + (contentType.map { [("Content-Type", $0)] } ?? []),
            body: Array(body.utf8)
        )
    }

    @Test func usersAreManagedWithTheAdminTokenOnly() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        let body = #"{"password":"Circle of Life"}"#
        for token in [nil, "wrong", ""] as [String?] {
            let refused = try await Self.put(harness, "Mufasa", body: body, token: token)
            #expect(refused.status == 401 && refused.reason == "admin_unauthorized", "\(token ?? "none")")
            #expect(refused.headers["WWW-Authenticate"] == ["Bearer"])
        }
        #expect(try await harness.store.account(name: "Mufasa") == nil)
        #expect(try await Self.put(harness, "Mufasa", body: body).status == 201)
        #expect(try await Self.put(harness, "Mufasa", body: #"{"password":"new one"}"#).status == 204)
        let stored = try #require(try await harness.store.account(name: "Mufasa"))
        // Never the password: a PBKDF2 PHC string and the HA1s.
        #expect(stored.basicHash?.hasPrefix("$pbkdf2-sha256$i=210000$") == true)
        #expect(stored.digests.keys.sorted() == [.sha256, .sha512_256, .md5])
        #expect(stored.digests[.sha256]?.ha1 == DigestResponse.ha1(username: "Mufasa", realm: GatewayHarness.realm, password: "new one", algorithm: .sha256))
        #expect(!"\(stored)".contains("new one"))

        let deleteWithout = try await GatewayHarness.send(method: "DELETE", url: harness.base + "/signet/v1/users/Mufasa")
        #expect(deleteWithout.status == 401 && deleteWithout.reason == "admin_unauthorized")
        let delete = { () async throws -> GatewayHarness.Answer in
            try await GatewayHarness.send(
                method: "DELETE",
                url: harness.base + "/signet/v1/users/Mufasa",
                headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
            )
        }
        #expect(try await delete().status == 204)
        let again = try await delete()
        #expect(again.status == 404 && again.reason == "not_found")
    }

    @Test(arguments: [
        ("not JSON", "Mufasa", "password"), ("no password", "Mufasa", #"{"pass":"x"}"#),
        ("another key too", "Mufasa", #"{"password":"x","admin":true}"#), ("an empty password", "Mufasa", #"{"password":""}"#),
        ("a password that is not a string", "Mufasa", #"{"password":5}"#), ("a colon in the name", "a%3Ab", #"{"password":"x"}"#),
        ("a control character in the name", "a%01b", #"{"password":"x"}"#), ("a name of spaces", "%20x", #"{"password":"x"}"#),
        ("a 129-byte name", String(repeating: "n", count: 129), #"{"password":"x"}"#),
    ])
    func badUsersAreRefusedAndNothingIsStored(_ what: String, _ segment: String, _ body: String) async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        let answer = try await Self.put(harness, segment, body: body)
        #expect(answer.status == 400 && answer.reason == "malformed_message", "\(what): \(answer.text)")
        #expect(try await harness.store.account(name: segment.removingPercentEncoding ?? segment) == nil)
    }

    /// A user is JSON, said so: a form (curl's `--data` default), text or nothing is refused with 415,
    /// whatever the body holds. A media type's parameters and case do not matter.
    @Test func aUserIsSentAsJSON() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        let body = #"{"password":"Circle of Life"}"#
        for contentType in ["application/x-www-form-urlencoded", "text/plain", "application/json-seq", "application/jsonx", nil] {
            let answer = try await Self.put(harness, "Mufasa", body: body, contentType: contentType)
            #expect(answer.status == 415 && answer.reason == "unsupported_media_type", "\(contentType ?? "none"): \(answer.text)")
        }
        #expect(try await harness.store.account(name: "Mufasa") == nil)
        #expect(try await Self.put(harness, "Mufasa", body: body, contentType: "Application/JSON; charset=utf-8").status == 201)
    }

    @Test func theUsersAPIIsAbsentWithoutPasswordsOrWithoutAnAdminToken() async throws {
        let plain = try await GatewayHarness.start(transport: .router)
        let tokenless = try await GatewayHarness.startWithPasswords(transport: .router) { $0.adminToken = nil }
        Cleanup.after {
            try await plain.stop()
            try await tokenless.stop()
        }
        for harness in [plain, tokenless] {
            let answer = try await Self.put(harness, "Mufasa", body: #"{"password":"x"}"#)
            #expect(answer.status == 404 && answer.reason == "not_found")
        }
    }

    @Test func aPasswordOrDeviceRouteTakesEitherAndOffersBoth() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let bare = try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/either/x")
        #expect(bare.status == 401 && bare.reason == "credentials_missing")
        #expect(bare.headers["WWW-Authenticate"].last == "Signature")
        #expect(try GatewayHarness.digestChallenges(bare).count == 2)

        let challenge = try await harness.challenge("/echo/either/x")
        let field = GatewayHarness.digest(challenge, user: "Mufasa", password: "Circle of Life", uri: "/echo/either/x").fieldValue
        let withPassword = try await GatewayHarness.send(method: "GET", url: harness.base + "/echo/either/x", headers: [("Authorization", field)])
        #expect((withPassword.json["headers"] as? [String: String])?["signet-trust-level"] == "password")

        // A device registered without a login is not the user's: refused here.
        let stranger = try await harness.register(.ed25519)
        let unbound = try stranger.signer.sign(
            try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/either/x"),
            created: Date(),
            nonce: Nonce.random()
        )
        let refusedDevice = try await GatewayHarness.send(unbound)
        #expect(refusedDevice.status == 403 && refusedDevice.reason == "trust_level_insufficient")
        // One registered with the login is, and its Digest-looking Authorization goes no further.
        let device = try await Self.registerBound(harness, user: "Mufasa", password: "Circle of Life")
        var message = try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/either/x")
        message.fields.append(name: "Authorization", value: field)
        let signed = try device.signer.sign(message, created: Date(), nonce: Nonce.random())
        let withSignature = try await GatewayHarness.send(signed)
        let seen = withSignature.json["headers"] as? [String: String]
        #expect(seen?["signet-device"] == device.deviceID && seen?["signet-user"] == "Mufasa", "\(withSignature.text)")
        #expect(seen?["authorization"] == nil)
        // A shared secret is below a device key.
        let bank = MessageSigner(key: try SigningKey(secret: GatewayHarness.bankSecret), keyID: "bank-v1", algorithm: HMACSHA256())
        let shared = try bank.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/either/x"), created: Date(), nonce: Nonce.random())
        let refused = try await GatewayHarness.send(shared)
        #expect(refused.status == 403 && refused.reason == "trust_level_insufficient")
    }

    /// A P-256 device registered with a Digest login as `user`.
    static func registerBound(_ harness: GatewayHarness, user: String, password: String) async throws -> GatewayHarness.Device {
        let key = try SigningKey.generate(.p256)
        let body = try harness.registration(key: key, alg: "ecdsa-p256-sha256", challenge: try await harness.challenge())
        let digest = try await harness.challenge("/echo/password/login")
        let field = GatewayHarness.digest(digest, user: user, password: password, method: "POST", uri: "/signet/v1/devices", body: body)
        let answer = try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/devices",
            headers: [("Content-Type", "application/json"), ("Authorization", field.fieldValue)],
            body: body
        )
        guard answer.status == 201, let keyID = answer.json["keyid"] as? String, let deviceID = answer.json["deviceId"] as? String,
            answer.json["user"] as? String == user
        else { throw HarnessError("bound registration: \(answer.status) \(answer.text)") }
        return GatewayHarness.Device(key: key, keyID: keyID, deviceID: deviceID, algorithm: ECDSAP256SHA256())
    }

    @Test func aLoginAtRegistrationBindsTheDeviceAndAWrongOneRegistersNothing() async throws {
        let harness = try await GatewayHarness.startWithPasswords(transport: .router)
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let key = try SigningKey.generate(.p256)
        func register(password: String) async throws -> GatewayHarness.Answer {
            let challenge = try await harness.challenge()
            let body = try harness.registration(key: key, alg: "ecdsa-p256-sha256", challenge: challenge)
            // Any password route's nonce will do: a nonce is not bound to a path, the answer's uri is.
            let digest = try await harness.challenge("/echo/password/login")
            let field = GatewayHarness.digest(
                digest, user: "Mufasa", password: password, method: "POST", uri: "/signet/v1/devices", body: body).fieldValue
            return try await GatewayHarness.send(
                method: "POST",
                url: harness.base + "/signet/v1/devices",
                headers: [("Content-Type", "application/json"), ("Authorization", field)],
                body: body
            )
        }
        let wrong = try await register(password: "wrong")
        #expect(wrong.status == 401 && wrong.reason == "credentials_invalid")
        let right = try await register(password: "Circle of Life")
        #expect(right.status == 201 && right.json["user"] as? String == "Mufasa", "\(right.text)")
        #expect(!right.headers["Authentication-Info"].isEmpty)
        let deviceID = try #require(right.json["deviceId"] as? String)
        #expect(try await harness.store.device(id: deviceID)?.user == "Mufasa")
        // Without credentials, a registration still works here (not required) and binds nobody.
        let anonymous = try await harness.register(.p256)
        #expect(try await harness.store.device(id: anonymous.deviceID)?.user == nil)
    }

    /// Deleting a user revokes every device registered for the user in the same step: the next
    /// signed request is refused `key_revoked` at once, the device key cache notwithstanding, and
    /// the upstream never sees it; other devices carry on.
    @Test func deletingAUserRevokesItsDevicesAtOnce() async throws {
        let harness = try await GatewayHarness.startWithPasswords(store: .memory, transport: .router)
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let device = try await Self.registerBound(harness, user: "Mufasa", password: "Circle of Life")
        let other = try await harness.register(.p256)
        func signed(_ device: GatewayHarness.Device) async throws -> GatewayHarness.Answer {
            try await GatewayHarness.send(
                try device.signer.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/either/x"), created: Date(), nonce: Nonce.random())
            )
        }
        // Resolved once, so its key is in the cache when the user goes.
        #expect(try await signed(device).status == 200)
        let upstream = try #require(harness.upstream)
        let before = upstream.received.count
        let deleted = try await GatewayHarness.send(
            method: "DELETE",
            url: harness.base + "/signet/v1/users/Mufasa",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(deleted.status == 204, "\(deleted.text)")
        let refused = try await signed(device)
        #expect(refused.status == 401 && refused.reason == "key_revoked", "\(refused.text)")
        #expect(upstream.received.count == before)
        let record = try await GatewayHarness.send(
            method: "GET",
            url: harness.base + "/signet/v1/devices/\(device.deviceID)",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(record.json["status"] as? String == "revoked", "\(record.text)")
        // A device not the user's is untouched (refused here by level, not by revocation).
        #expect(try await signed(other).reason == "trust_level_insufficient")
        let gone = try await GatewayHarness.send(
            method: "DELETE",
            url: harness.base + "/signet/v1/users/Mufasa",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(gone.status == 404 && gone.reason == "not_found")
    }

    /// With `requireForRegistration`, every way of registering asks for a login first, and a
    /// refused login spends no challenge: the same challenge then registers, bound to the user.
    @Test func aRegistrationNeedsALoginWhenRequiredAndARefusedOneSpendsNoChallenge() async throws {
        let harness = try await GatewayHarness.startWithPasswords(store: .memory, transport: .router) {
            $0.passwords?.requireForRegistration = true
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let json = [("Content-Type", "application/json")]
        let key = try SigningKey.generate(.p256)
        let challenge = try await harness.challenge()
        let body = try harness.registration(key: key, alg: "ecdsa-p256-sha256", challenge: challenge)
        let devices = harness.base + "/signet/v1/devices"
        let bare = try await GatewayHarness.send(method: "POST", url: devices, headers: json, body: body)
        #expect(bare.status == 401 && bare.reason == "credentials_missing", "\(bare.text)")
        #expect(try GatewayHarness.digestChallenges(bare).isEmpty == false, "the answer offers the login")
        let digest = try await harness.challenge("/echo/password/login")
        func login(_ password: String) -> String {
            GatewayHarness.digest(digest, user: "Mufasa", password: password, method: "POST", uri: "/signet/v1/devices", body: body).fieldValue
        }
        let wrong = try await GatewayHarness.send(method: "POST", url: devices, headers: json + [("Authorization", login("Hakuna Matata"))], body: body)
        #expect(wrong.status == 401 && wrong.reason == "credentials_invalid", "\(wrong.text)")
        let right = try await GatewayHarness.send(method: "POST", url: devices, headers: json + [("Authorization", login("Circle of Life"))], body: body)
        #expect(right.status == 201 && right.json["user"] as? String == "Mufasa", "the challenge was still unspent: \(right.text)")
        // App Attest's registration asks the same.
        let iPhone = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        let attested = try await harness.attest(iPhone)
        #expect(attested.status == 401 && attested.reason == "credentials_missing", "\(attested.text)")
    }


    /// A `password-or-device` route judges a device's level before any cryptography, as signature
    /// routes do: an unbound device's signature with its bytes zeroed is refused by level, not as
    /// invalid, and claims no nonce — the same nonce, rightly signed, passes on a `verified` route.
    @Test func aPasswordOrDeviceRouteJudgesTheLevelBeforeAnyCryptography() async throws {
        let harness = try await GatewayHarness.startWithPasswords(store: .memory, transport: .router)
        Cleanup.after { try await harness.stop() }
        let stranger = try await harness.register(.p256)
        let nonce = Nonce.random()
        let zeroed = try stranger.signer.sign(
            try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/either/x"),
            created: Date(),
            nonce: nonce
        ).replacingSignatureBytes()
        let refused = try await GatewayHarness.send(zeroed)
        #expect(refused.status == 403 && refused.reason == "trust_level_insufficient", "\(refused.text)")
        let elsewhere = try stranger.signer.sign(try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/x"), created: Date(), nonce: nonce)
        #expect(try await GatewayHarness.send(elsewhere).status == 200, "the refused request claimed its nonce")
    }


    /// On a `password-or-device` route a signed request's password credentials go no further — so
    /// a signature may not cover them: refused before any cryptography, and nothing reaches the
    /// upstream. Covering another scheme's `Authorization`, which the upstream does get, passes.
    @Test func aSignatureMayNotCoverPasswordCredentialsTheUpstreamNeverGets() async throws {
        let harness = try await GatewayHarness.startWithPasswords(store: .memory, transport: .router)
        Cleanup.after { try await harness.stop() }
        let upstream = try #require(harness.upstream)
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let device = try await Self.registerBound(harness, user: "Mufasa", password: "Circle of Life")
        func signed(_ authorization: String) throws -> HTTPMessage {
            var message = try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/either/x")
            message.fields.append(name: "Authorization", value: authorization)
            return try device.signer.sign(message, components: [.method, .targetURI, "authorization"], created: Date(), nonce: Nonce.random())
        }
        let before = upstream.received.count
        let basic = try await GatewayHarness.send(try signed("Basic TXVmYXNhOkNpcmNsZSBvZiBMaWZl"))
        #expect(basic.status == 400 && basic.reason == "malformed_header", "\(basic.text)")
        #expect(upstream.received.count == before)
        let bearer = try await GatewayHarness.send(try signed("Bearer an-upstream-token"))
        #expect(bearer.status == 200, "\(bearer.text)")
        #expect(upstream.received.last?.fields["Authorization"] == ["Bearer an-upstream-token"])
    }


    /// An App Attest registration that carries a Digest login binds the attested device to the user,
    /// as a key registration does: `"user"` and `Authentication-Info` in the answer, and the
    /// device's requests then tell the upstream who it is for.
    @Test func anAttestedRegistrationWithALoginBindsTheDevice() async throws {
        let harness = try await GatewayHarness.startWithPasswords(store: .memory, transport: .router) {
            $0.routes.insert(.init(prefix: "/echo/attested", access: .appAttest), at: 0)
        }
        Cleanup.after { try await harness.stop() }
        try await harness.putUser("Mufasa", password: "Circle of Life")
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        let challenge = try await harness.challenge()
        let attestation = try device.attest(clientDataHash: Array(SHA256.hash(data: Array(challenge.utf8))))
        let body = Array(try JSONSerialization.data(withJSONObject: ["keyId": device.keyID, "attestation": Base64.encode(attestation), "challenge": challenge]))
        let digest = try await harness.challenge("/echo/password/login")
        let login = GatewayHarness.digest(digest, user: "Mufasa", password: "Circle of Life", method: "POST", uri: "/signet/v1/devices/attest", body: body)
        let registered = try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/signet/v1/devices/attest",
            headers: [("Content-Type", "application/json"), ("Authorization", login.fieldValue)],
            body: body
        )
        #expect(registered.status == 201 && registered.json["user"] as? String == "Mufasa", "\(registered.text)")
        #expect(registered.headers.first(name: "Authentication-Info")?.contains("rspauth=") == true, "\(registered.headers)")
        let signed = try SimulatedAppAttestSigner(device: device).sign(
            try HTTPMessage.request(method: "GET", uri: harness.base + "/echo/attested/x"),
            created: Date(),
            nonce: Nonce.random()
        )
        let answer = try await GatewayHarness.send(signed)
        let seen = answer.json["headers"] as? [String: String] ?? [:]
        #expect(seen["signet-user"] == "Mufasa" && seen["signet-trust-level"] == "app-attest", "\(answer.text)")
    }

}
