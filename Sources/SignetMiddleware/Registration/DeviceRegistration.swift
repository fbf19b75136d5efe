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
        key = try Self.publicKey(object["publicKey"])
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

/// What every device registration shares (device keys, debug devices, Android keys).
extension DeviceRegistration {
    /// The algorithms a device key signs with.
    static let algorithms: Set<String> = ["ecdsa-p256-sha256", "ed25519"]

    /// A registration's `publicKey`: a JWK object or an SPKI PEM string.
    static func publicKey(_ value: Any?) throws -> VerificationKey {
        switch value {
        case let jwk as [String: Any]:
            return try VerificationKey(jwk: try JWK(json: Array(try JSONSerialization.data(withJSONObject: jwk))))
        case let pem as String:
            return try VerificationKey(pem: pem)
        default:
            throw SignetError(.malformedMessage, "publicKey must be a JWK object or a PEM string")
        }
    }

    /// `algorithm`, when it is a device key's and fits `key`: `alg_unsupported`, `alg_mismatch` otherwise.
    static func algorithm(_ algorithm: String, for key: VerificationKey) throws -> any SignatureAlgorithm {
        guard algorithms.contains(algorithm) else {
            throw SignetError(.algUnsupported, "device keys use ecdsa-p256-sha256 or ed25519")
        }
        let found = try SignatureAlgorithms.standard.require(algorithm)
        guard found.keyType == key.type else {
            throw SignetError(.algMismatch, "the key is \(key.type.rawValue), not for \(algorithm)")
        }
        return found
    }

    /// The key as a device record keeps it: its RFC 7638 thumbprint as the key id, and the JWK
    /// naming that id and the algorithm.
    static func stored(_ key: VerificationKey, algorithm: String) throws -> (keyID: String, jwk: JWK) {
        var jwk = key.jwk
        let keyID = try jwk.thumbprint
        jwk.kid = keyID
        jwk.alg = algorithm
        return (keyID, jwk)
    }
}
