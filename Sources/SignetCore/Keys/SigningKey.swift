// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import _CryptoExtras

/// A private key or shared secret that can produce signatures.
///
/// - Important: A `SigningKey` never prints its material: its description shows only its type.
public struct SigningKey: Sendable, CustomStringConvertible {
    enum Storage: Sendable {
        case symmetric(SharedSecret)
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    let storage: Storage

    init(_ storage: Storage) { self.storage = storage }

    /// A P-256 key someone else made (a device's Keystore key, in the simulator).
    public init(p256 key: P256.Signing.PrivateKey) { self.storage = .p256(key) }

    /// An HMAC secret from its raw bytes (decode base64 first: see ``init(base64Secret:)``).
    public init(secret: some Sequence<UInt8>) throws {
        let bytes = Array(secret)
        guard !bytes.isEmpty else { throw SignetError(.invalidKey, "an HMAC secret cannot be empty") }
        self.storage = .symmetric(SharedSecret(SymmetricKey(data: bytes)))
    }

    /// An HMAC secret given as standard or URL-safe base64 (the RFC 9421 B.1.5 form).
    public init(base64Secret: String) throws {
        let trimmed = base64Secret.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Base64.decode(trimmed) ?? Base64.urlDecode(trimmed) else {
            throw SignetError(.invalidKey, "the HMAC secret is not valid base64")
        }
        try self.init(secret: bytes)
    }

    /// A fresh random key for `type`; RSA keys are 2048 bits unless `rsaBits` says otherwise.
    public static func generate(_ type: KeyType, rsaBits: Int = 2048) throws -> SigningKey {
        switch type {
        case .symmetric: return SigningKey(.symmetric(SharedSecret(SymmetricKey(size: .bits256))))
        case .p256: return SigningKey(.p256(P256.Signing.PrivateKey()))
        case .p384: return SigningKey(.p384(P384.Signing.PrivateKey()))
        case .ed25519: return SigningKey(.ed25519(Curve25519.Signing.PrivateKey()))
        case .rsa: return SigningKey(.rsa(try _RSA.Signing.PrivateKey(keySize: .init(bitCount: rsaBits))))
        }
    }

    public var type: KeyType {
        switch storage {
        case .symmetric: .symmetric
        case .p256: .p256
        case .p384: .p384
        case .ed25519: .ed25519
        case .rsa: .rsa
        }
    }

    /// The key a verifier needs: the public key, or the same secret for HMAC.
    public var verificationKey: VerificationKey {
        switch storage {
        case .symmetric(let key): VerificationKey(.symmetric(key))
        case .p256(let key): VerificationKey(.p256(key.publicKey))
        case .p384(let key): VerificationKey(.p384(key.publicKey))
        case .ed25519(let key): VerificationKey(.ed25519(key.publicKey))
        case .rsa(let key): VerificationKey(.rsa(key.publicKey))
        }
    }

    public var description: String { "SigningKey(\(type.rawValue))" }

    /// The P-256 private key, for modules that hand it to other libraries (JOSE).
    public var p256PrivateKey: P256.Signing.PrivateKey? {
        if case .p256(let key) = storage { return key }
        return nil
    }

    /// The Ed25519 private key, for modules that hand it to other libraries (JOSE).
    public var ed25519PrivateKey: Curve25519.Signing.PrivateKey? {
        if case .ed25519(let key) = storage { return key }
        return nil
    }
}
