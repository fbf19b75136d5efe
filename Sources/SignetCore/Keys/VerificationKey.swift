// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import _CryptoExtras

/// A public key, or a shared secret for HMAC, that checks signatures.
///
/// - Important: For HMAC this holds the secret itself; its description never shows it.
public struct VerificationKey: Sendable, CustomStringConvertible {
    enum Storage: Sendable {
        case symmetric(SharedSecret)
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    let storage: Storage

    init(_ storage: Storage) { self.storage = storage }

    /// A P-256 public key from its 65-byte uncompressed point (App Attest and WebAuthn use this form).
    public init(p256X963 bytes: some Sequence<UInt8>) throws {
        do {
            storage = .p256(try P256.Signing.PublicKey(x963Representation: Array(bytes)))
        } catch {
            throw SignetError(.invalidKey, "not a valid P-256 point")
        }
    }

    /// An Ed25519 public key from its 32 raw bytes.
    ///
    /// - Throws: `invalid_key` for points of small order and non-canonical encodings
    ///   (`Ed25519PublicKeyCheck`) as well as for anything that is not a point.
    public init(ed25519Raw bytes: some Sequence<UInt8>) throws {
        let raw = Array(bytes)
        try Ed25519PublicKeyCheck.check(raw)
        do {
            storage = .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: raw))
        } catch {
            throw SignetError(.invalidKey, "not a valid Ed25519 public key")
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

    /// SubjectPublicKeyInfo DER; `nil` for a shared secret.
    public var spkiDER: [UInt8]? {
        switch storage {
        case .symmetric: nil
        case .p256(let key): Array(key.derRepresentation)
        case .p384(let key): Array(key.derRepresentation)
        case .ed25519(let key): Array(key.derRepresentation)
        case .rsa(let key): Array(key.derRepresentation)
        }
    }

    /// The P-256 public key, for modules (App Attest) that need the concrete type.
    public var p256PublicKey: P256.Signing.PublicKey? {
        if case .p256(let key) = storage { return key }
        return nil
    }

    /// The Ed25519 public key, for modules that hand it to other libraries (JOSE).
    public var ed25519PublicKey: Curve25519.Signing.PublicKey? {
        if case .ed25519(let key) = storage { return key }
        return nil
    }

    public var description: String { "VerificationKey(\(type.rawValue))" }
}
