// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// RFC 9180 base mode for DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, written out from
/// the RFC for the tests: it seals with any Diffie-Hellman output, so a test can play the attacker
/// who sends a small-order `enc` and knows the all-zero shared secret. Checked against the RFC's
/// own vector before it is trusted.
struct HPKEBaseSender {
    static let kem: UInt16 = 0x0020, kdf: UInt16 = 0x0001, aead: UInt16 = 0x0001

    let key: SymmetricKey
    let baseNonce: [UInt8]
    let exporterSecret: SymmetricKey

    init(dh: [UInt8], enc: [UInt8], recipientPublicKey: [UInt8], info: [UInt8]) {
        let kemSuite = Array("KEM".utf8) + Self.i2osp(Self.kem)
        let eaePRK = Self.labeledExtract(salt: [], suite: kemSuite, label: "eae_prk", ikm: dh)
        let sharedSecret = Self.labeledExpand(eaePRK, suite: kemSuite, label: "shared_secret", info: enc + recipientPublicKey, length: 32)
        let suite = Array("HPKE".utf8) + Self.i2osp(Self.kem) + Self.i2osp(Self.kdf) + Self.i2osp(Self.aead)
        let pskIDHash = Self.labeledExtract(salt: [], suite: suite, label: "psk_id_hash", ikm: [])
        let infoHash = Self.labeledExtract(salt: [], suite: suite, label: "info_hash", ikm: info)
        let context = [0] + Self.bytes(pskIDHash) + Self.bytes(infoHash)
        let secret = Self.labeledExtract(salt: Self.bytes(sharedSecret), suite: suite, label: "secret", ikm: [])
        key = Self.labeledExpand(secret, suite: suite, label: "key", info: context, length: 16)
        baseNonce = Self.bytes(Self.labeledExpand(secret, suite: suite, label: "base_nonce", info: context, length: 12))
        exporterSecret = Self.labeledExpand(secret, suite: suite, label: "exp", info: context, length: 32)
    }

    /// The first message of the context (sequence number 0).
    func seal(_ plaintext: [UInt8], aad: [UInt8] = []) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: baseNonce), authenticating: aad)
        return Array(box.ciphertext) + Array(box.tag)
    }

    func export(_ context: [UInt8], length: Int) -> [UInt8] {
        let suite = Array("HPKE".utf8) + Self.i2osp(Self.kem) + Self.i2osp(Self.kdf) + Self.i2osp(Self.aead)
        return Self.bytes(Self.labeledExpand(exporterSecret, suite: suite, label: "sec", info: context, length: length))
    }

    private static func labeledExtract(salt: [UInt8], suite: [UInt8], label: String, ikm: [UInt8]) -> SymmetricKey {
        let labeled = Array("HPKE-v1".utf8) + suite + Array(label.utf8) + ikm
        return SymmetricKey(data: Array(HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: labeled), salt: salt)))
    }

    private static func labeledExpand(_ prk: SymmetricKey, suite: [UInt8], label: String, info: [UInt8], length: Int) -> SymmetricKey {
        let labeled = i2osp(UInt16(length)) + Array("HPKE-v1".utf8) + suite + Array(label.utf8) + info
        return HKDF<SHA256>.expand(pseudoRandomKey: prk, info: labeled, outputByteCount: length)
    }

    private static func i2osp(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func bytes(_ key: SymmetricKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }
}
