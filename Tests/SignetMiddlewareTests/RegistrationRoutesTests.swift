// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SignetCore
import SignetMiddleware
import SignetStore
import Testing

/// The registration routes embedded in a plain Hummingbird app with the memory store: a device
/// registers, its signed requests pass the middleware, and revocation shuts it out — no gateway,
/// no database, no HTTP client in the app.
@Suite struct RegistrationRoutesTests {
    static let adminToken = "admin-\(Nonce.random())"

    func app(
        store: MemoryStore,
        configuration: RegistrationConfiguration = RegistrationConfiguration(adminToken: adminToken)
    ) -> some ApplicationProtocol {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        // The cache the middleware reads through; registration empties it on a revocation.
        let cache = DeviceKeyCache(StoreKeyResolver(devices: store), lifetime: .seconds(60))
        let verifier = SignetRequestVerifier(
            verifier: MessageVerifier(keys: cache, nonces: store),
            publicScheme: "https",
            publicAuthority: "api.example.com"
        )
        let router = Router(context: SignetRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        SignetRegistrationRoutes<SignetRequestContext>(store: store, configuration: configuration, keyCache: cache)
            .add(to: router)
        router.group("api")
            .add(middleware: SignetVerificationMiddleware(verifier: verifier, requirement: .trustLevel(.deviceKey)))
            .post("scores") { _, context in context.signetIdentity?.deviceID ?? "-" }
        return Application(router: router, logger: logger)
    }

    func registration(key: SigningKey, alg: String, challenge: String, publicKey: Any? = nil) throws -> [String: Any] {
        let proof = try SignatureAlgorithms.standard.require(alg).sign(Array(challenge.utf8), with: key)
        return [
            "challenge": challenge, "alg": alg,
            "publicKey": try publicKey
                ?? JSONSerialization.jsonObject(with: Data(key.verificationKey.jwk.jsonString.utf8)),
            "signature": Base64.urlEncode(proof),
        ]
    }

    func signedScore(_ key: SigningKey, keyID: String) throws -> HTTPMessage {
        let request = try HTTPMessage.request(
            method: "POST",
            uri: "https://api.example.com/api/scores",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"score\":42}".utf8)
        )
        return try MessageSigner(key: key, keyID: keyID, algorithm: Ed25519Algorithm())
            .sign(request, created: Date(), nonce: Nonce.random())
    }

    @Test func aDeviceRegistersSignsAndIsRevoked() async throws {
        let store = MemoryStore()
        try await app(store: store).test(.live) { client in
            let challenge = try await client.send("POST", "/signet/v1/challenges")
            #expect(challenge.status == 201)
            let value = try #require(challenge.json["challenge"] as? String)
            let key = try SigningKey.generate(.ed25519)
            let registered = try await client.sendJSON(
                "POST",
                "/signet/v1/devices",
                registration(key: key, alg: "ed25519", challenge: value)
            )
            #expect(registered.status == 201, "\(registered.text)")
            let keyID = try #require(registered.json["keyid"] as? String)
            let deviceID = try #require(registered.json["deviceId"] as? String)
            #expect(registered.json["trustLevel"] as? String == "device-key")
            #expect(try await store.device(keyID: keyID)?.deviceID == deviceID, "the app's own store holds the device")

            let accepted = try await client.send(try signedScore(key, keyID: keyID))
            #expect(accepted.status == 200 && accepted.text == deviceID)

            // The challenge was used up by the registration.
            let again = try await client.sendJSON(
                "POST",
                "/signet/v1/devices",
                registration(key: try SigningKey.generate(.ed25519), alg: "ed25519", challenge: value)
            )
            #expect(again.status == 401)
            #expect(again.reason == "challenge_unknown", "\(again.text)")

            // Revocation needs the admin token, then takes effect at once despite the key cache.
            let anonymous = try await client.send("DELETE", "/signet/v1/devices/\(deviceID)")
            #expect(anonymous.status == 401 && anonymous.reason == "admin_unauthorized")
            let revoked = try await client.send(
                "DELETE",
                "/signet/v1/devices/\(deviceID)",
                headers: [.authorization: "Bearer \(Self.adminToken)"]
            )
            #expect(revoked.status == 204)
            let refused = try await client.send(try signedScore(key, keyID: keyID))
            #expect(refused.status == 401 && refused.reason == "key_revoked", "\(refused.text)")
        }
    }

    @Test func refusalsCarryTheirReasonAndStoreNothing() async throws {
        let store = MemoryStore()
        try await app(store: store).test(.live) { client in
            // The Ed25519 identity point: a "key" under which one constant signature verifies everything.
            let identity = [UInt8(1)] + [UInt8](repeating: 0, count: 31)
            let challenge = try #require(try await client.send("POST", "/signet/v1/challenges").json["challenge"] as? String)
            let smallOrder = try await client.sendJSON(
                "POST",
                "/signet/v1/devices",
                registration(
                    key: try SigningKey.generate(.ed25519),
                    alg: "ed25519",
                    challenge: challenge,
                    publicKey: ["kty": "OKP", "crv": "Ed25519", "x": Base64.urlEncode(identity)]
                )
            )
            #expect(smallOrder.status == 400 && smallOrder.reason == "invalid_key", "\(smallOrder.text)")

            // A CSR needs a certificate issuer, which this app did not give.
            let key = try SigningKey.generate(.ed25519)
            let second = try #require(try await client.send("POST", "/signet/v1/challenges").json["challenge"] as? String)
            var withCSR = try registration(key: key, alg: "ed25519", challenge: second)
            withCSR["csr"] = "-----BEGIN CERTIFICATE REQUEST-----\nAA==\n-----END CERTIFICATE REQUEST-----"
            let csr = try await client.sendJSON("POST", "/signet/v1/devices", withCSR)
            #expect(csr.status == 400 && csr.reason == "malformed_message")
            let keyID = try key.verificationKey.jwk.thumbprint
            #expect(try await store.device(keyID: keyID) == nil, "a refused registration leaves no device")

            // App Attest needs a verifier, which this app did not give.
            let attest = try await client.sendJSON("POST", "/signet/v1/devices/attest", ["keyId": "k"])
            #expect(attest.status == 404 && attest.reason == "not_found")

            // Oversized bodies are refused before parsing.
            let huge = try await client.send(
                "POST",
                "/signet/v1/devices",
                headers: [.contentType: "application/json"],
                body: [UInt8](repeating: 0x20, count: SignetRegistrationRoutes<SignetRequestContext>.maximumRegistrationBytes + 1)
            )
            #expect(huge.status == 413 && huge.reason == "body_too_large")
        }
    }

    @Test func challengesAreLimitedPerSourceAndUnattestedKeysCanBeTurnedOff() async throws {
        let store = MemoryStore()
        let configuration = RegistrationConfiguration(allowUnattestedDevices: false, challengesPerSourcePerMinute: 2)
        try await app(store: store, configuration: configuration).test(.live) { client in
            #expect(try await client.send("POST", "/signet/v1/challenges").status == 201)
            #expect(try await client.send("POST", "/signet/v1/challenges").status == 201)
            let third = try await client.send("POST", "/signet/v1/challenges")
            #expect(third.status == 429 && third.reason == "rate_limited")

            let unattested = try await client.sendJSON("POST", "/signet/v1/devices", ["challenge": "x"])
            #expect(unattested.status == 403 && unattested.reason == "trust_level_insufficient")
            // The admin API is off without a token.
            let revoke = try await client.send("DELETE", "/signet/v1/devices/dev_x")
            #expect(revoke.status == 404 && revoke.reason == "not_found")
        }
    }
}
