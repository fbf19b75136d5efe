// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HTTPTypes
import PropertyBased
import SignetCore
import SignetStore
import Testing

import SignetMiddleware

/// The invariant of `client-attestation` routes: a PoP is taken at most once across every instance
/// on one store, and only when it is by the attested key, for this audience, within its window,
/// with an attestation of this gateway's. Random sequences of PoPs — the attested key or another,
/// this audience or another, fresh or stale, with this gateway's attestation or an app token in its
/// place, new or sent before — through random instances, against a model of what should be taken.
@Suite struct ClientAttestationVerifierPropertyTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let audience = "https://api.example.com"

    enum Flaw: CaseIterable { case none, otherKey, otherAudience, stale, appToken }

    @Test func aPoPIsTakenAtMostOnceAndOnlyWhenSound() async throws {
        let key = try SigningKey.generate(.p256)
        let stranger = try SigningKey.generate(.p256)
        let tokens = try AppTokenIssuer(ring: AppTokenKeyRing(signingKey: P256.Signing.PrivateKey()), issuer: "https://gw.example.com", audience: ["api"], lifetimeSeconds: 3600)
        let issuer = try ClientAttestationIssuer(tokens: tokens, clientID: "com.example.app", lifetimeSeconds: 3600)
        let devices = KeyRing([
            KeyRecord(keyID: "k1", algorithm: "ecdsa-p256-sha256", key: key.verificationKey, owner: KeyOwner(deviceID: "d1", trustLevel: .deviceKey))
        ])
        let (attestation, _) = try await issuer.issue(deviceID: "d1", keyID: "k1", trustLevel: .deviceKey, instanceKey: key.verificationKey.jwk, now: Self.t0)
        let (appToken, _) = try await tokens.issue(deviceID: "d1", keyID: "k1", trustLevel: .deviceKey, deviceKey: key.verificationKey.jwk, limitedUse: false, now: Self.t0)
        await propertyCheck(
            count: 40,
            input: Gen.int(in: 1...3),
            // Each event: which jti (6), which flaw (5), which instance (3).
            Gen.int(in: 0...89).array(of: 1...30)
        ) { instanceCount, events in
            let store = MemoryStore()
            let instances = (0..<instanceCount).map { _ in
                ClientAttestationVerifier(issuer: issuer, devices: devices, store: store, proofLifetime: 60, clockSkew: 5)
            }
            var taken: Set<String> = []
            for (index, event) in events.enumerated() {
                let (jtiNumber, flawIndex, instance) = (event % 6, event / 6 % 5, event / 30)
                let now = Self.t0.addingTimeInterval(Double(index))
                let flaw = Flaw.allCases[flawIndex]
                let jti = "jti-\(jtiNumber)-\(flawIndex)"
                let pop = try! ClientAttestationPoP.make(
                    key: flaw == .otherKey ? stranger : key,
                    audience: flaw == .otherAudience ? "https://other.example.com" : Self.audience,
                    challenge: nil,
                    now: flaw == .stale ? now.addingTimeInterval(-120) : now,
                    jti: jti
                )
                var fields = HTTPFields()
                fields[ClientAttestationVerifier.attestationField] = flaw == .appToken ? appToken : attestation
                fields[ClientAttestationVerifier.proofField] = pop
                var accepted = true
                do {
                    _ = try await instances[instance % instanceCount].identity(for: fields, audience: Self.audience, requireChallenge: false, now: now)
                } catch {
                    accepted = false
                }
                let expected = flaw == .none && !taken.contains(jti)
                #expect(accepted == expected, "event \(index): \(flaw), \(jti), taken \(taken.sorted())")
                if accepted { taken.insert(jti) }
            }
        }
    }
}
