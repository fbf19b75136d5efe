// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetAppAttest
import SignetCore
import SignetSimulator

/// App Attest verification rates, with objects from the simulator (same formats and curves as
/// Apple's: a P-384 CA chain, a P-256 device key, DER assertions).
enum AppAttestBench {
    static let appID = "ABCDE12345.dev.signet.bench"

    static func measure(seconds: Double) async throws -> [(String, Double)] {
        let ca = try DevelopmentAttestationCA()
        let device = SimulatedAppAttestDevice(appID: appID, ca: ca)
        let challenge = Array("bench-challenge".utf8)
        let attestation = try device.attest(clientDataHash: Array(SHA256.hash(data: challenge)))
        let attestations = AppAttestAttestationVerifier(
            policy: try AppAttestPolicy(appIDs: [appID], allowDevelopment: true, roots: [ca.root])
        )
        let key = try await attestations.verify(
            attestation: attestation,
            keyID: device.keyID,
            challenge: challenge,
            at: Date()
        ).publicKey

        let clientData = Array(repeating: UInt8(ascii: "x"), count: 300)
        let assertions = try (0..<512).map { _ in try device.assertion(clientData: clientData) }
        let verifier = AppAttestAssertionVerifier(appIDs: [appID])
        let assertionRate = try rate(seconds: seconds) { index in
            _ = try verifier.verify(
                assertion: assertions[index % assertions.count],
                clientData: clientData,
                publicKey: key
            )
        }

        // The same through RFC 9421: a signed POST with Content-Digest and a nonce.
        let ring = KeyRing([KeyRecord(keyID: device.keyID, algorithm: "apple-app-attest", key: key)])
        let signer = SimulatedAppAttestSigner(device: device)
        let now = Date()
        let body = Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
        let request = try HTTPMessage.request(
            method: "POST",
            uri: "https://api.example.com/scores",
            fields: [("Content-Type", "application/json")],
            body: body
        )
        let messages = try (0..<512).map { index in try signer.sign(request, created: now, nonce: "n\(index)") }
        // Each assertion carries the next counter: the verifier advances it, as the gateway's store does.
        var messageVerifier = MessageVerifier(
            keys: ring,
            algorithms: SignatureAlgorithms.standard.registering(AppAttestAlgorithm(appIDs: [appID])),
            nonces: MemoryNonceStore(),
            counters: MemoryCounterStore()
        )
        let clock = ContinuousClock()
        var done = 0
        let start = clock.now
        while clock.now - start < .milliseconds(Int(seconds * 1000)) {
            // The same messages again: fresh replay guards, or every one would be a replay.
            messageVerifier.nonces = MemoryNonceStore()
            messageVerifier.counters = MemoryCounterStore()
            for message in messages { _ = try await messageVerifier.verify(message, now: now) }
            done += messages.count
        }
        let rfcRate = Double(done) / Self.seconds(clock.now - start)

        var attestationsDone = 0
        let attestationStart = clock.now
        while clock.now - attestationStart < .milliseconds(Int(seconds * 1000)) {
            _ = try await attestations.verify(
                attestation: attestation,
                keyID: device.keyID,
                challenge: challenge,
                at: now
            )
            attestationsDone += 1
        }
        let attestationRate = Double(attestationsDone) / Self.seconds(clock.now - attestationStart)
        return [
            ("app-attest assertion verify", assertionRate),
            ("apple-app-attest (RFC 9421)", rfcRate),
            ("app-attest attestation verify", attestationRate),
        ]
    }

    private static func rate(seconds: Double, _ body: (Int) throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var done = 0
        while clock.now - start < .milliseconds(Int(seconds * 1000)) {
            for index in 0..<256 { try body(done + index) }
            done += 256
        }
        return Double(done) / Self.seconds(clock.now - start)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
