// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import Logging
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// The verification middleware on its own, in a plain Hummingbird app (no gateway).
@Suite(.awaitsCleanups) struct MiddlewareTests {
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
        let server = try await BackgroundServer.start(logger: logger) { onRunning in
            let router = Router(context: SignetRequestContext.self)
            router.get("/public") { _, _ in "anyone" }
            let api = router.group("api")
            api.add(middleware: SignetVerificationMiddleware(verifier: verifier, requirement: .trustLevel(.deviceKey)))
            api.post("transfer") { request, context -> String in
                var request = request
                let body = try await request.collectBody(upTo: 1024)
                return
                    "\(context.signetIdentity?.deviceID ?? "-") \(context.signetIdentity?.trustLevel.rawValue ?? "-") \(String(buffer: body))"
            }
            return Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await onRunning($0.localAddress?.port ?? 0) },
                logger: logger
            )
        }
        Cleanup.after { await server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let signer = MessageSigner(key: key, keyID: "key-1", algorithm: Ed25519Algorithm())
        let request = try HTTPMessage.request(
            method: "POST",
            uri: "https://api.example.com/api/transfer",
            body: Array("100".utf8)
        )
        let signed = try signer.sign(request, created: Date(), nonce: Nonce.random())
        let ok = try await GatewayHarness.send(signed.sent(to: base))
        #expect(ok.status == 200)
        #expect(ok.text == "dev_1 device-key 100", "the handler sees the identity and the body bytes")
        let replay = try await GatewayHarness.send(signed.sent(to: base))
        #expect(replay.status == 401 && replay.reason == "nonce_replayed")
        let unsigned = try await GatewayHarness.send(method: "POST", url: base + "/api/transfer", body: Array("1".utf8))
        #expect(unsigned.status == 401 && unsigned.reason == "signature_missing")
        #expect(try await GatewayHarness.send(method: "GET", url: base + "/public").text == "anyone")
    }
}
