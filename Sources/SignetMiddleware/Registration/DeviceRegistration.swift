// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// The body of `POST /signet/v1/devices`.
struct DeviceRegistration {
    let challenge: String
    let algorithm: String
    let key: VerificationKey
    let signature: [UInt8]
    /// A PKCS#10 request (PEM or base64 DER) for a client certificate over the same key.
    let csr: String?

    init(json bytes: [UInt8]) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw SignetError(.malformedMessage, "the registration is not a JSON object")
        }
        guard let challenge = object["challenge"] as? String, let algorithm = object["alg"] as? String,
            let signatureText = object["signature"] as? String
        else { throw SignetError(.malformedMessage, "challenge, alg, publicKey and signature are required") }
        switch object["publicKey"] {
        case let jwk as [String: Any]:
            let data = try JSONSerialization.data(withJSONObject: jwk)
            key = try VerificationKey(jwk: try JWK(json: Array(data)))
        case let pem as String:
            key = try VerificationKey(pem: pem)
        default:
            throw SignetError(.malformedMessage, "publicKey must be a JWK object or a PEM string")
        }
        guard let signature = Base64.urlDecode(signatureText) ?? Base64.decode(signatureText) else {
            throw SignetError(.malformedMessage, "signature must be base64url")
        }
        self.challenge = challenge
        self.algorithm = algorithm
        self.signature = signature
        self.csr = object["csr"] as? String
    }

    /// Whether the signature over the challenge's UTF-8 bytes verifies. P-256 signatures may come raw
    /// (r‖s, RFC 9421 style) or DER (what CryptoKit's `derRepresentation` gives).
    func proves(with algorithm: any SignatureAlgorithm) -> Bool {
        let message = Array(challenge.utf8)
        if (try? algorithm.verify(signature, over: message, with: key)) != nil { return true }
        if key.type == .p256, let publicKey = key.p256PublicKey,
            let der = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        {
            return publicKey.isValidSignature(der, for: message)
        }
        return false
    }
}
