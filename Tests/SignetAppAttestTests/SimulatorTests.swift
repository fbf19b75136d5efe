// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetSimulator
import Testing

@testable import SignetAppAttest

/// The simulator's objects go through the same verifiers as real devices' objects.
@Suite struct SimulatorTests {
    static let appID = "ABCDE12345.dev.signet.demo"

    @Test func simulatedAttestationsVerifyOnlyWhenTheSimulatorRootIsTrusted() async throws {
        let ca = try DevelopmentAttestationCA()
        let device = SimulatedAppAttestDevice(appID: Self.appID, ca: ca)
        let challenge = Array("server-challenge".utf8)
        let attestation = try device.attest(clientDataHash: Array(SHA256.hash(data: challenge)))
        let trusting = AppAttestAttestationVerifier(
            policy: try AppAttestPolicy(appIDs: [Self.appID], allowDevelopment: true, roots: [ca.root])
        )
        let verified = try await trusting.verify(
            attestation: attestation,
            keyID: device.keyID,
            challenge: challenge,
            at: Date()
        )
        #expect(verified.keyID == device.keyID)
        #expect(verified.environment == .development)
        // Apple's root, the default, does not accept the simulator.
        let apple = AppAttestAttestationVerifier(
            policy: try AppAttestPolicy(appIDs: [Self.appID], allowDevelopment: true)
        )
        let error = await #expect(throws: SignetError.self) {
            try await apple.verify(attestation: attestation, keyID: device.keyID, challenge: challenge, at: Date())
        }
        #expect(error?.code == .attestationChainInvalid)

        // Assertions count up; a repeated or lower counter is refused.
        let assertions = AppAttestAssertionVerifier(appIDs: [Self.appID])
        let first = try assertions.verify(
            assertion: try device.assertion(clientData: [1]),
            clientData: [1],
            publicKey: verified.publicKey,
            previousCounter: 0
        )
        let second = try assertions.verify(
            assertion: try device.assertion(clientData: [2]),
            clientData: [2],
            publicKey: verified.publicKey,
            previousCounter: first
        )
        #expect((first, second) == (1, 2))
        let rollback = #expect(throws: SignetError.self) {
            try assertions.verify(
                assertion: try device.assertion(clientData: [3], counter: 1),
                clientData: [3],
                publicKey: verified.publicKey,
                previousCounter: second
            )
        }
        #expect(rollback?.code == .counterNotIncreasing)
    }
}
