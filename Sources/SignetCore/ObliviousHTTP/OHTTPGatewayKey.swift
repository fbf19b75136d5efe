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
    /// RFC 9180 §7.1.4 requires refusing it, and swift-crypto's HPKE does not, so it is checked here
    /// (``hasSmallOrder(x25519:)``).
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
                guard !Self.hasSmallOrder(x25519: encapsulatedKey) else {
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

    /// The encodings of the X25519 points whose product with any clamped scalar is zero: 0, 1, the
    /// two points of order 8, and p - 1, p, p + 1 (the top bit ignored, as X25519 ignores it).
    /// Checking them is the same as computing the shared secret and finding zeros, without a second
    /// scalar multiplication per request.
    static func hasSmallOrder(x25519 point: [UInt8]) -> Bool {
        guard point.count == 32 else { return false }
        var masked = point
        masked[31] &= 0x7F
        return smallOrderX25519.contains(masked)
    }

    private static let smallOrderX25519: Set<[UInt8]> = {
        let high: [UInt8] = [UInt8](repeating: 0xFF, count: 30) + [0x7F]
        return [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            [
                0xE0, 0xEB, 0x7A, 0x7C, 0x3B, 0x41, 0xB8, 0xAE, 0x16, 0x56, 0xE3, 0xFA, 0xF1, 0x9F, 0xC4, 0x6A,
                0xDA, 0x09, 0x8D, 0xEB, 0x9C, 0x32, 0xB1, 0xFD, 0x86, 0x62, 0x05, 0x16, 0x5F, 0x49, 0xB8, 0x00,
            ],
            [
                0x5F, 0x9C, 0x95, 0xBC, 0xA3, 0x50, 0x8C, 0x24, 0xB1, 0xD0, 0xB1, 0x55, 0x9C, 0x83, 0xEF, 0x5B,
                0x04, 0x44, 0x5C, 0xC4, 0x58, 0x1C, 0x8E, 0x86, 0xD8, 0x22, 0x4E, 0xDD, 0xD0, 0x9F, 0x11, 0x57,
            ],
            [0xEC] + high,
            [0xED] + high,
            [0xEE] + high,
        ]
    }()
}
