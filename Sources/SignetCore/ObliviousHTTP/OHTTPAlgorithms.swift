// SPDX-License-Identifier: Apache-2.0
import Crypto

/// The HPKE algorithms Signet offers for Oblivious HTTP (RFC 9180 §7 identifiers), and their
/// swift-crypto counterparts.
public enum OHTTPAlgorithms {
    /// DHKEM(P-256, HKDF-SHA256).
    public static let kemP256: UInt16 = 0x0010
    /// DHKEM(X25519, HKDF-SHA256).
    public static let kemX25519: UInt16 = 0x0020
    public static let kdfHKDFSHA256: UInt16 = 0x0001
    public static let aeadAES128GCM: UInt16 = 0x0001
    public static let aeadAES256GCM: UInt16 = 0x0002
    public static let aeadChaCha20Poly1305: UInt16 = 0x0003

    /// Every symmetric suite Signet offers: HKDF-SHA256 with each AEAD.
    public static let allSuites: [OHTTPKeyConfiguration.SymmetricSuite] = [
        .init(kdf: kdfHKDFSHA256, aead: aeadAES128GCM),
        .init(kdf: kdfHKDFSHA256, aead: aeadAES256GCM),
        .init(kdf: kdfHKDFSHA256, aead: aeadChaCha20Poly1305),
    ]

    /// The encapsulated key's length for a KEM (`Nenc`), `nil` for one Signet does not offer.
    static func encapsulatedKeyLength(kem: UInt16) -> Int? {
        switch kem {
        case kemX25519: 32
        case kemP256: 65
        default: nil
        }
    }

    static func ciphersuite(kem: UInt16, suite: OHTTPKeyConfiguration.SymmetricSuite) throws -> HPKE.Ciphersuite {
        let hpkeKEM: HPKE.KEM
        switch kem {
        case kemX25519: hpkeKEM = .Curve25519_HKDF_SHA256
        case kemP256: hpkeKEM = .P256_HKDF_SHA256
        default: throw SignetError(.decapsulationFailed, "KEM 0x\(String(kem, radix: 16)) is not offered")
        }
        guard suite.kdf == kdfHKDFSHA256 else {
            throw SignetError(.decapsulationFailed, "KDF 0x\(String(suite.kdf, radix: 16)) is not offered")
        }
        return HPKE.Ciphersuite(kem: hpkeKEM, kdf: .HKDF_SHA256, aead: try aead(suite.aead))
    }

    static func aead(_ id: UInt16) throws -> HPKE.AEAD {
        switch id {
        case aeadAES128GCM: .AES_GCM_128
        case aeadAES256GCM: .AES_GCM_256
        case aeadChaCha20Poly1305: .chaChaPoly
        default: throw SignetError(.decapsulationFailed, "AEAD 0x\(String(id, radix: 16)) is not offered")
        }
    }

    /// `(Nk, Nn)` of an AEAD.
    static func aeadSizes(_ id: UInt16) -> (key: Int, nonce: Int) {
        id == aeadAES128GCM ? (16, 12) : (32, 12)
    }

    /// One-shot AEAD seal, ciphertext then tag.
    static func seal(aead id: UInt16, key: SymmetricKey, nonce: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        switch id {
        case aeadChaCha20Poly1305:
            let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce))
            return Array(box.ciphertext) + Array(box.tag)
        default:
            let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce))
            return Array(box.ciphertext) + Array(box.tag)
        }
    }

    /// One-shot AEAD open of ciphertext followed by its 16-byte tag.
    static func open(aead id: UInt16, key: SymmetricKey, nonce: [UInt8], sealed: [UInt8]) throws -> [UInt8] {
        guard sealed.count >= 16 else { throw SignetError(.decapsulationFailed, "the response is shorter than its tag") }
        let ciphertext = sealed[..<(sealed.count - 16)]
        let tag = sealed[(sealed.count - 16)...]
        do {
            switch id {
            case aeadChaCha20Poly1305:
                let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
                return Array(try ChaChaPoly.open(box, using: key))
            default:
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
                return Array(try AES.GCM.open(box, using: key))
            }
        } catch {
            throw SignetError(.decapsulationFailed, "the response does not decrypt")
        }
    }

    /// RFC 9458 §4.4: the response key and nonce from the exported secret, `enc` and the response nonce.
    static func responseKeys(
        secret: SymmetricKey,
        encapsulatedKey: [UInt8],
        responseNonce: [UInt8],
        aead id: UInt16
    ) -> (key: SymmetricKey, nonce: [UInt8]) {
        let sizes = aeadSizes(id)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: secret, salt: encapsulatedKey + responseNonce)
        let key = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("key".utf8), outputByteCount: sizes.key)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("nonce".utf8), outputByteCount: sizes.nonce)
        return (key, nonce.withUnsafeBytes { Array($0) })
    }

    /// RFC 9458 §4.3's `info` for a request header.
    static func requestInfo(header: [UInt8]) -> [UInt8] {
        Array("message/bhttp request".utf8) + [0] + header
    }

    static let responseExportLabel = Array("message/bhttp response".utf8)
}
