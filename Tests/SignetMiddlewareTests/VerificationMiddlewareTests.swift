// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import Logging
import SignetCore
import SignetMiddleware
import SignetStore
import HummingbirdTesting
import Testing

/// The verification middleware on its own, in a plain Hummingbird app (no gateway).
@Suite struct VerificationMiddlewareTests {
    @Test func protectsARouteGroupAndHandsTheIdentityToTheHandler() async throws {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let store = MemoryStore()
        let key = try SigningKey.generate(.ed25519)
        try await store.registerDevice(
            DeviceRecord(
                deviceID: "dev_1",
                keyID: "key-1",
                algorithm: "ed25519",
                publicKeyJWK: key.verificationKey.jwk.jsonString,
                trustLevel: .deviceKey,
                createdAt: Date()
            )
        )
        let verifier = SignetRequestVerifier(
            verifier: MessageVerifier(keys: StoreKeyResolver(devices: store), nonces: store),
            publicScheme: "https",
            publicAuthority: "api.example.com"
        )
        let router = Router(context: SignetRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        router.get("/public") { _, _ in "anyone" }
        let api = router.group("api")
        api.add(middleware: SignetVerificationMiddleware(verifier: verifier, requirement: .trustLevel(.deviceKey)))
        api.post("transfer") { request, context -> String in
            var request = request
            let body = try await request.collectBody(upTo: 1024)
            return
                "\(context.signetIdentity?.deviceID ?? "-") \(context.signetIdentity?.trustLevel.rawValue ?? "-") \(String(buffer: body))"
        }
        let app = Application(router: router, logger: logger)
        let signer = MessageSigner(key: key, keyID: "key-1", algorithm: Ed25519Algorithm())
        let request = try HTTPMessage.request(
            method: "POST",
            uri: "https://api.example.com/api/transfer",
            fields: [("Content-Type", "text/plain")],
            body: Array("100".utf8)
        )
        let signed = try signer.sign(request, created: Date(), nonce: Nonce.random())
        try await app.test(.live) { client in
            let ok = try await client.send(signed)
            #expect(ok.status == 200)
            #expect(ok.text == "dev_1 device-key 100", "the handler sees the identity and the body bytes")
            let replay = try await client.send(signed)
            #expect(replay.status == 401 && replay.reason == "nonce_replayed")
            let unsigned = try await client.send("POST", "/api/transfer", body: Array("1".utf8))
            #expect(unsigned.status == 401 && unsigned.reason == "signature_missing")
            #expect(try await client.send("GET", "/public").text == "anyone")
        }
    }
}
