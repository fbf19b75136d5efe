// SPDX-License-Identifier: Apache-2.0
#if canImport(DeviceCheck) && os(iOS)
import CryptoKit
import DeviceCheck
import Foundation
import SignetCore

/// Apple App Attest on a real device: a Secure Enclave key attested by Apple at registration, then
/// an assertion (with its monotonic counter) as each request's `apple-app-attest` signature.
///
/// The key id is kept by the app (Keychain); pass it back on the next launch.
@available(iOS 14.0, *)
public struct AppAttestProvider: AttestationProvider {
    public let keyID: String

    /// Generates a new attested key (call once per install; keep `keyID`).
    public static func generate() async throws -> AppAttestProvider {
        let service = DCAppAttestService.shared
        guard service.isSupported else {
            throw SignetError(.algUnsupported, "App Attest is not supported on this device")
        }
        return AppAttestProvider(keyID: try await service.generateKey())
    }

    public init(keyID: String) {
        self.keyID = keyID
    }

    public func registration(challenge: String) async throws -> RegistrationRequest {
        let clientDataHash = Data(SHA256.hash(data: Data(challenge.utf8)))
        let attestation = try await DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash)
        return try RegistrationRequest(
            path: "/signet/v1/devices/attest",
            json: ["keyId": keyID, "attestation": attestation.base64EncodedString(), "challenge": challenge]
        )
    }

    public func signer(for device: RegisteredDevice) async throws -> any RequestSigning {
        AssertionSigner(keyID: keyID)
    }

    /// RFC 9421 with the assertion over the signature base (the server's `apple-app-attest`).
    struct AssertionSigner: RequestSigning {
        let keyID: String

        func sign(_ request: HTTPMessage, now: Date) async throws -> HTTPMessage {
            var message = request
            let components = MessageSigner.defaultComponents(for: message)
            if components.contains(.contentDigest), !message.fields.contains("content-digest") {
                message.fields.append(name: "Content-Digest", value: ContentDigest.fieldValue(for: message.body, algorithm: .sha256))
            }
            let parameters = SignatureParameters(
                components: components,
                created: Int64(now.timeIntervalSince1970),
                nonce: Nonce.random(),
                algorithm: "apple-app-attest",
                keyID: keyID
            )
            let base = try SignatureBase(message: message, parameters: parameters)
            let clientDataHash = Data(SHA256.hash(data: Data(base.bytes)))
            let assertion = try await DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash)
            message.fields.append(name: "Signature-Input", value: "sig1=\(try parameters.serialized)")
            message.fields.append(name: "Signature", value: "sig1=:\(assertion.base64EncodedString()):")
            return message
        }
    }
}
#endif
