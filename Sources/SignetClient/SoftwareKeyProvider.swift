// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
import X509

/// A P-256 key held in this process: registration with proof of possession (the challenge signed),
/// and optionally a CSR so the device CA issues a client certificate for mutual TLS.
///
/// Use it where no hardware attestation exists (Linux, macOS, servers calling servers).
public struct SoftwareKeyProvider: AttestationProvider {
    public let privateKey: P256.Signing.PrivateKey
    /// Whether to send a CSR with the registration (for a client certificate).
    public var requestCertificate: Bool

    public init(privateKey: P256.Signing.PrivateKey = .init(), requestCertificate: Bool = false) {
        self.privateKey = privateKey
        self.requestCertificate = requestCertificate
    }

    public var signingKey: SigningKey {
        get throws { try SigningKey(pem: privateKey.pemRepresentation) }
    }

    /// The private key in PEM (PKCS#8), for a TLS client identity or a PKCS#12 export.
    public var privateKeyPEM: String { privateKey.pemRepresentation }

    public func registration(challenge: String) async throws -> RegistrationRequest {
        let key = try signingKey
        let jwk = try JSONSerialization.jsonObject(with: Data(key.verificationKey.jwk.jsonString.utf8))
        var body: [String: any Sendable] = [
            "challenge": challenge,
            "alg": "ecdsa-p256-sha256",
            "publicKey": jwk as? [String: any Sendable] ?? [:],
            "signature": Base64.urlEncode(Array(try privateKey.signature(for: Array(challenge.utf8)).rawRepresentation)),
        ]
        if requestCertificate { body["csr"] = try certificateSigningRequestPEM() }
        return try RegistrationRequest(path: "/signet/v1/devices", json: body)
    }

    public func signer(for device: RegisteredDevice) async throws -> any RequestSigning {
        MessageSigner(key: try signingKey, keyID: device.keyID, algorithm: ECDSAP256SHA256())
    }

    /// A PKCS#10 request over this key; the device CA sets the subject, so this one is a placeholder.
    public func certificateSigningRequestPEM() throws -> String {
        let csr = try CertificateSigningRequest(
            version: .v1,
            subject: try DistinguishedName { CommonName("signet device") },
            privateKey: Certificate.PrivateKey(privateKey),
            attributes: CertificateSigningRequest.Attributes(),
            signatureAlgorithm: .ecdsaWithSHA256
        )
        return try csr.serializeAsPEM().pemString
    }
}
