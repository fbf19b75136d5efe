// SPDX-License-Identifier: Apache-2.0
import Crypto
import _CryptoExtras

/// The two keys of an encrypt-then-MAC envelope (AES-256-CBC and HMAC-SHA256), under a version name
/// the envelope can select it by.
public struct EnvelopeKey: Sendable {
    public var version: String
    public let encryptionKey: SymmetricKey
    public let macKey: SymmetricKey

    /// From raw keys of 32 bytes each.
    public init(version: String, encryptionKey: [UInt8], macKey: [UInt8]) throws {
        guard encryptionKey.count == 32, macKey.count == 32 else {
            throw SignetError(.invalidKey, "envelope keys are 32 bytes each (AES-256, HMAC-SHA256)")
        }
        self.version = version
        self.encryptionKey = SymmetricKey(data: encryptionKey)
        self.macKey = SymmetricKey(data: macKey)
    }

    /// The hash PBKDF2 iterates.
    public enum PBKDF2Hash: String, Sendable, CaseIterable {
        case sha1, sha256, sha512

        var function: KDF.Insecure.PBKDF2.HashFunction {
            switch self {
            case .sha1: .insecureSHA1
            case .sha256: .sha256
            case .sha512: .sha512
            }
        }
    }

    /// Both keys from a password, each with its own salt, as RNCryptor and the seed apps derive
    /// them. Slow on purpose: derive once (at start), never per request.
    public static func derive(
        version: String,
        password: [UInt8],
        encryptionSalt: [UInt8],
        macSalt: [UInt8],
        rounds: Int,
        hash: PBKDF2Hash
    ) throws -> EnvelopeKey {
        guard rounds >= 1, !encryptionSalt.isEmpty, !macSalt.isEmpty else {
            throw SignetError(.invalidKey, "PBKDF2 needs at least one round and non-empty salts")
        }
        func derive(_ salt: [UInt8]) throws -> [UInt8] {
            try KDF.Insecure.PBKDF2.deriveKey(
                from: password,
                salt: salt,
                using: hash.function,
                outputByteCount: 32,
                unsafeUncheckedRounds: rounds
            ).withUnsafeBytes { Array($0) }
        }
        return try EnvelopeKey(version: version, encryptionKey: try derive(encryptionSalt), macKey: try derive(macSalt))
    }

    /// HMAC-SHA256 under the MAC key.
    func mac(_ parts: [UInt8]...) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: macKey)
        for part in parts { hmac.update(data: part) }
        return Array(hmac.finalize())
    }

    func encrypt(_ plaintext: [UInt8], iv: [UInt8]) throws -> [UInt8] {
        Array(try AES._CBC.encrypt(plaintext, using: encryptionKey, iv: AES._CBC.IV(ivBytes: iv)))
    }

    /// Decrypts an authenticated ciphertext; any failure is `envelope_invalid`, like a bad MAC.
    func decrypt(_ ciphertext: [UInt8], iv: [UInt8]) throws -> [UInt8] {
        do {
            return Array(try AES._CBC.decrypt(ciphertext, using: encryptionKey, iv: AES._CBC.IV(ivBytes: iv)))
        } catch {
            throw EnvelopeKey.invalid
        }
    }

    /// The one refusal for every way an envelope can be wrong: no oracle for padding, MAC or version.
    static var invalid: SignetError { SignetError(.envelopeInvalid, "the envelope does not open") }

    static func randomIV() -> [UInt8] {
        SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }
    }

    /// Eight random bytes, RNCryptor's salt size.
    public static func randomSalt() -> [UInt8] {
        Array(randomIV().prefix(8))
    }
}
