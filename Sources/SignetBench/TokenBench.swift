// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetMiddleware
import SignetStore

/// What an `app-token` route does per request: read the header, verify the ES256 signature
/// (jwt-kit over swift-crypto), decode and check the claims, resolve the device through the key
/// cache. One P-256 verification is the floor, hence the comparison with openssl's.
enum TokenBench {
    static func measure(seconds: Double) async throws -> Double {
        let store = MemoryStore()
        let deviceKey = P256.Signing.PrivateKey()
        let jwk = try VerificationKey(p256X963: deviceKey.publicKey.x963Representation).jwk
        try await store.registerDevice(
            DeviceRecord(
                deviceID: "dev_bench",
                keyID: "key_bench",
                algorithm: "ecdsa-p256-sha256",
                publicKeyJWK: jwk.jsonString,
                trustLevel: .deviceKey,
                createdAt: Date()
            )
        )
        let issuer = try AppTokenIssuer(
            ring: AppTokenKeyRing(signingKey: P256.Signing.PrivateKey(), next: P256.Signing.PrivateKey().publicKey),
            issuer: "https://gateway.example.com",
            audience: ["scores"],
            lifetimeSeconds: 3600
        )
        let verifier = AppTokenVerifier(
            issuer: issuer,
            devices: DeviceKeyCache(StoreKeyResolver(devices: store)),
            nonces: store
        )
        let now = Date()
        let (token, _) = try await issuer.issue(
            deviceID: "dev_bench",
            keyID: "key_bench",
            trustLevel: .deviceKey,
            deviceKey: jwk,
            limitedUse: false,
            now: now
        )
        let clock = ContinuousClock()
        let start = clock.now
        var done = 0
        while clock.now - start < .milliseconds(Int(seconds * 1000)) {
            for _ in 0..<64 {
                _ = try await verifier.identity(for: token, audience: nil, now: now)
            }
            done += 64
        }
        let elapsed = clock.now - start
        return Double(done) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
