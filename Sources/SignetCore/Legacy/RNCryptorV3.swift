// SPDX-License-Identifier: Apache-2.0
import Crypto
import _CryptoExtras

/// The RNCryptor v3 data format, which iOS apps have shipped for a decade: a header (version 3,
/// options, for passwords two 8-byte salts, a 16-byte IV), AES-256-CBC ciphertext with PKCS #7
/// padding, and HMAC-SHA256 over header and ciphertext. Passwords go through PBKDF2-HMAC-SHA1,
/// 10,000 rounds, one derivation per salt.
public enum RNCryptorV3 {
    public static let rounds = 10_000

    /// The salts of a password-format message, to pick a key derived from them beforehand.
    public static func salts(of data: [UInt8]) -> (encryption: [UInt8], mac: [UInt8])? {
        guard data.count >= 2 + 16 + 16 + 16 + 32, data[0] == 3, data[1] == 1 else { return nil }
        return (Array(data[2..<10]), Array(data[10..<18]))
    }

    /// The keys a password gives for a message's salts (the slow step).
    public static func key(password: [UInt8], salts: (encryption: [UInt8], mac: [UInt8]), version: String = "") throws -> EnvelopeKey {
        try EnvelopeKey.derive(
            version: version,
            password: password,
            encryptionSalt: salts.encryption,
            macSalt: salts.mac,
            rounds: rounds,
            hash: .sha1
        )
    }

    /// Seals with keys (options 0), or with a password's keys and their salts (options 1).
    public static func seal(
        _ plaintext: [UInt8],
        key: EnvelopeKey,
        passwordSalts: (encryption: [UInt8], mac: [UInt8])? = nil,
        iv: [UInt8]? = nil
    ) throws -> [UInt8] {
        let iv = iv ?? EnvelopeKey.randomIV()
        var header: [UInt8] = [3, passwordSalts == nil ? 0 : 1]
        if let passwordSalts { header += passwordSalts.encryption + passwordSalts.mac }
        header += iv
        let ciphertext = try key.encrypt(plaintext, iv: iv)
        return header + ciphertext + key.mac(header, ciphertext)
    }

    /// Opens a message with the first key whose MAC matches (checked in constant time before
    /// anything is decrypted).
    ///
    /// - Throws: `envelope_invalid`, the same for every failure.
    public static func open(_ data: [UInt8], keys: [EnvelopeKey]) throws -> (plaintext: [UInt8], key: EnvelopeKey) {
        guard data.count >= 2, data[0] == 3, data[1] <= 1 else { throw EnvelopeKey.invalid }
        let headerLength = data[1] == 1 ? 2 + 16 + 16 : 2 + 16
        // At least one block of ciphertext (PKCS #7 always pads), and a whole number of blocks.
        guard data.count >= headerLength + 16 + 32, (data.count - headerLength - 32) % 16 == 0 else {
            throw EnvelopeKey.invalid
        }
        let header = Array(data[..<headerLength])
        let ciphertext = Array(data[headerLength..<(data.count - 32)])
        let tag = Array(data[(data.count - 32)...])
        for key in keys where ConstantTime.equals(key.mac(header, ciphertext), tag) {
            return (try key.decrypt(ciphertext, iv: Array(header.suffix(16))), key)
        }
        throw EnvelopeKey.invalid
    }
}
