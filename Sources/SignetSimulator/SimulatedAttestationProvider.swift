// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetClient
import SignetCore

/// The client SDK's App Attest path with a simulated device: attestation at registration, then
/// assertions as request signatures, in one value with no lifecycle (the demo's). An app's debug
/// builds use `AppAttestLifecycle` over ``SimulatedAppAttestService`` instead, as on an iPhone.
public struct SimulatedAttestationProvider: AttestationProvider {
    public let device: SimulatedAppAttestDevice

    public init(device: SimulatedAppAttestDevice) {
        self.device = device
    }

    public func registration(challenge: String) async throws -> RegistrationRequest {
        let attestation = try device.attest(clientDataHash: Array(SHA256.hash(data: Array(challenge.utf8))))
        return try RegistrationRequest(
            path: "/signet/v1/devices/attest",
            json: ["keyId": device.keyID, "attestation": Base64.encode(attestation), "challenge": challenge]
        )
    }

    public func signer(for device: RegisteredDevice) async throws -> any RequestSigning {
        Signer(signer: SimulatedAppAttestSigner(device: self.device))
    }

    private struct Signer: RequestSigning {
        let signer: SimulatedAppAttestSigner
        func sign(_ request: HTTPMessage, now: Date) async throws -> HTTPMessage {
            try signer.sign(request, created: now, nonce: Nonce.random())
        }
    }
}
