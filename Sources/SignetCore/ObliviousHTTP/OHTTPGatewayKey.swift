// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// A gateway's HPKE private key with the configuration it publishes.
public struct OHTTPGatewayKey: Sendable {
    public enum PrivateKey: Sendable {
        case x25519(Curve25519.KeyAgreement.PrivateKey)
        case p256(P256.KeyAgreement.PrivateKey)
    }

    public let privateKey: PrivateKey
    public let configuration: OHTTPKeyConfiguration

    /// - Parameters:
    ///   - keyID: The 8-bit key identifier clients name.
    ///   - privateKey: The KEM follows from the key's type.
    ///   - suites: The KDF and AEAD pairs offered; all three AEADs with HKDF-SHA256 by default.
    public init(keyID: UInt8, privateKey: PrivateKey, suites: [OHTTPKeyConfiguration.SymmetricSuite] = OHTTPAlgorithms.allSuites) {
        self.privateKey = privateKey
        let (kem, publicKey): (UInt16, [UInt8]) =
            switch privateKey {
            case .x25519(let key): (OHTTPAlgorithms.kemX25519, Array(key.publicKey.rawRepresentation))
            case .p256(let key): (OHTTPAlgorithms.kemP256, Array(key.publicKey.x963Representation))
            }
        self.configuration = OHTTPKeyConfiguration(keyID: keyID, kem: kem, publicKey: publicKey, suites: suites)
    }

    /// Opens the HPKE context for `encapsulatedKey` and decrypts `ciphertext` with it.
    ///
    /// An X25519 `enc` of small order gives an all-zero shared secret that anyone can compute;
    /// RFC 9180 §7.1.4 requires refusing it, and swift-crypto's HPKE does not, so it is checked here.
    func open(
        ciphertext: [UInt8],
        encapsulatedKey: [UInt8],
        ciphersuite: HPKE.Ciphersuite,
        info: [UInt8],
        exportLength: Int
    ) throws -> (plaintext: [UInt8], secret: SymmetricKey) {
        do {
            switch privateKey {
            case .x25519(let key):
                let peer = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: encapsulatedKey)
                let shared = try key.sharedSecretFromKeyAgreement(with: peer)
                guard !shared.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } }) else {
                    throw SignetError(.decapsulationFailed, "the encapsulated key has small order")
                }
                var recipient = try HPKE.Recipient(
                    privateKey: key,
                    ciphersuite: ciphersuite,
                    info: Data(info),
                    encapsulatedKey: Data(encapsulatedKey)
                )
                let plaintext = try recipient.open(ciphertext, authenticating: Data())
                return (Array(plaintext), try recipient.exportSecret(context: OHTTPAlgorithms.responseExportLabel, outputByteCount: exportLength))
            case .p256(let key):
                var recipient = try HPKE.Recipient(
                    privateKey: key,
                    ciphersuite: ciphersuite,
                    info: Data(info),
                    encapsulatedKey: Data(encapsulatedKey)
                )
                let plaintext = try recipient.open(ciphertext, authenticating: Data())
                return (Array(plaintext), try recipient.exportSecret(context: OHTTPAlgorithms.responseExportLabel, outputByteCount: exportLength))
            }
        } catch let error as SignetError {
            throw error
        } catch {
            // One reason for every way it fails: nothing to tell an attacker apart.
            throw SignetError(.decapsulationFailed, "the request does not decrypt under this key")
        }
    }
}
