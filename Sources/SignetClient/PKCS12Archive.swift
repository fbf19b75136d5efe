// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
import X509
import _CryptoExtras

/// Writes a PKCS#12 (RFC 7292) file holding a client certificate chain and its private key, for
/// legacy clients (browsers, curl, Android keystores) that only import `.p12`.
///
/// Modern algorithms only, as OpenSSL 3 writes by default: the key in a PBES2 shrouded bag
/// (PBKDF2-HMAC-SHA256, AES-256-CBC), certificates in the clear, and the whole protected by an
/// HMAC-SHA256 MAC keyed with the RFC 7292 Appendix B derivation.
public enum PKCS12Archive {
    /// PBKDF2 and MAC iterations: swift-crypto's floor for PBKDF2 (OpenSSL writes 2048; a higher
    /// count costs an importer a fraction of a second once and a password guesser that per guess).
    public static let iterations = 210_000
    /// The MAC's and the key's salt length: OpenSSL's (`PKCS12_SALT_LEN`, `PKCS5_SALT_LEN`), the
    /// shape `SecPKCS12Import` is known to read; a 16-byte MAC salt was reported refused by it.
    public static let saltLength = 8

    /// - Parameters:
    ///   - chainPEM: The certificate chain, leaf first.
    ///   - privateKeyPEM: The leaf's private key (PKCS#8 or SEC1 PEM).
    ///   - password: The import password.
    ///   - friendlyName: The label importers show.
    public static func export(
        chainPEM: String,
        privateKeyPEM: String,
        password: String,
        friendlyName: String = "Signet device"
    ) throws -> [UInt8] {
        let certificates: [[UInt8]]
        let keyInfo: [UInt8]
        do {
            certificates = try PEMDocument.parseMultiple(pemString: chainPEM).filter { $0.discriminator == "CERTIFICATE" }
                .map(\.derBytes)
            keyInfo = try pkcs8(privateKeyPEM: privateKeyPEM)
            guard let leaf = certificates.first else { throw SignetError(.invalidKey, "the chain holds no certificate") }
            // An archive whose key does not open its certificate imports, then fails at the first handshake.
            guard try Certificate.PrivateKey(pemEncoded: privateKeyPEM).publicKey == Certificate(derEncoded: leaf).publicKey
            else { throw SignetError(.keyMismatch, "the private key is not the leaf certificate's key") }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.invalidKey, "cannot read the certificate chain or key: \(error)")
        }
        let leaf = certificates[0]
        let localKeyID = Array(SHA256.hash(data: leaf).prefix(20))
        let attributes = set(
            sequence(oid(OID.localKeyID) + set(octetString(localKeyID)))
                + sequence(oid(OID.friendlyName) + set(tlv(0x1E, bmp(friendlyName, terminated: false))))
        )

        var certBags: [UInt8] = []
        for (index, der) in certificates.enumerated() {
            let certBag = sequence(oid(OID.x509Certificate) + explicit(0, octetString(der)))
            certBags += sequence(oid(OID.certBag) + explicit(0, certBag) + (index == 0 ? attributes : []))
        }
        let keyBag = sequence(
            oid(OID.shroudedKeyBag) + explicit(0, try encryptedPrivateKeyInfo(keyInfo, password: password))
                + attributes
        )
        let authenticatedSafe = sequence(data(sequence(certBags)) + data(sequence(keyBag)))

        let macSalt = randomBytes(saltLength)
        let macKey = pkcs12KDF(password: password, salt: macSalt, id: 3, iterations: iterations, length: 32)
        let mac = Array(HMAC<SHA256>.authenticationCode(for: authenticatedSafe, using: SymmetricKey(data: macKey)))
        let macData = sequence(
            sequence(sequence(oid(OID.sha256) + [0x05, 0x00]) + octetString(mac)) + octetString(macSalt)
                + integer(iterations)
        )
        return sequence(integer(3) + data(authenticatedSafe) + macData)
    }

    // MARK: Pieces

    private static func encryptedPrivateKeyInfo(_ keyInfo: [UInt8], password: String) throws -> [UInt8] {
        let salt = randomBytes(saltLength)
        let iv = AES._CBC.IV()
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8),
            salt: salt,
            using: .sha256,
            outputByteCount: 32,
            rounds: iterations
        )
        let ciphertext = try AES._CBC.encrypt(keyInfo, using: key, iv: iv)
        let pbkdf2 = sequence(
            oid(OID.pbkdf2)
                + sequence(octetString(salt) + integer(iterations) + sequence(oid(OID.hmacWithSHA256) + [0x05, 0x00]))
        )
        let scheme = sequence(oid(OID.aes256CBC) + octetString(Array(iv)))
        let algorithm = sequence(oid(OID.pbes2) + sequence(pbkdf2 + scheme))
        return sequence(algorithm + octetString(Array(ciphertext)))
    }

    /// PKCS#8 PrivateKeyInfo DER of a PEM key (SEC1 keys are rewrapped by their type).
    private static func pkcs8(privateKeyPEM: String) throws -> [UInt8] {
        let document = try PEMDocument(pemString: privateKeyPEM)
        if document.discriminator == "PRIVATE KEY" { return document.derBytes }
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM) { return Array(key.derRepresentation) }
        if let key = try? P384.Signing.PrivateKey(pemRepresentation: privateKeyPEM) { return Array(key.derRepresentation) }
        throw SignetError(.invalidKey, "export takes PKCS#8 keys, or SEC1 P-256/P-384 keys")
    }

    /// RFC 7292 Appendix B.2 with SHA-256 (u = 32, v = 64); one block is enough for a 32-byte key.
    static func pkcs12KDF(password: String, salt: [UInt8], id: UInt8, iterations: Int, length: Int) -> [UInt8] {
        let v = 64
        let diversifier = [UInt8](repeating: id, count: v)
        func stretch(_ bytes: [UInt8]) -> [UInt8] {
            guard !bytes.isEmpty else { return [] }
            let total = v * ((bytes.count + v - 1) / v)
            return (0..<total).map { bytes[$0 % bytes.count] }
        }
        let input = stretch(salt) + stretch(bmp(password, terminated: true))
        var block = Array(SHA256.hash(data: diversifier + input))
        for _ in 1..<iterations { block = Array(SHA256.hash(data: block)) }
        precondition(length <= block.count, "one SHA-256 block covers the 32-byte MAC key")
        return Array(block.prefix(length))
    }

    /// UTF-16 big-endian, with the two-byte terminator the PKCS#12 KDF's password needs.
    static func bmp(_ text: String, terminated: Bool) -> [UInt8] {
        var bytes = text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        if terminated { bytes += [0, 0] }
        return bytes
    }

    private static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    // MARK: DER

    private enum OID {
        static let data = "1.2.840.113549.1.7.1"
        static let certBag = "1.2.840.113549.1.12.10.1.3"
        static let shroudedKeyBag = "1.2.840.113549.1.12.10.1.2"
        static let x509Certificate = "1.2.840.113549.1.9.22.1"
        static let localKeyID = "1.2.840.113549.1.9.21"
        static let friendlyName = "1.2.840.113549.1.9.20"
        static let pbes2 = "1.2.840.113549.1.5.13"
        static let pbkdf2 = "1.2.840.113549.1.5.12"
        static let hmacWithSHA256 = "1.2.840.113549.2.9"
        static let aes256CBC = "2.16.840.1.101.3.4.1.42"
        static let sha256 = "2.16.840.1.101.3.4.2.1"
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var value = content.count
            var bytes: [UInt8] = []
            while value > 0 {
                bytes.insert(UInt8(value & 0xFF), at: 0)
                value >>= 8
            }
            length = [0x80 | UInt8(bytes.count)] + bytes
        }
        return [tag] + length + content
    }

    private static func sequence(_ content: [UInt8]) -> [UInt8] { tlv(0x30, content) }
    private static func set(_ content: [UInt8]) -> [UInt8] { tlv(0x31, content) }
    private static func octetString(_ content: [UInt8]) -> [UInt8] { tlv(0x04, content) }
    private static func explicit(_ number: UInt8, _ content: [UInt8]) -> [UInt8] { tlv(0xA0 | number, content) }

    /// ContentInfo { id-data, [0] OCTET STRING content }.
    private static func data(_ content: [UInt8]) -> [UInt8] {
        sequence(oid(OID.data) + explicit(0, octetString(content)))
    }

    private static func integer(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var remaining = value
        repeat {
            bytes.insert(UInt8(remaining & 0xFF), at: 0)
            remaining >>= 8
        } while remaining > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    private static func oid(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        var content: [UInt8] = [UInt8(arcs[0] * 40 + arcs[1])]
        for arc in arcs.dropFirst(2) {
            var chunk: [UInt8] = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                chunk.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            content += chunk
        }
        return tlv(0x06, content)
    }
}
