// SPDX-License-Identifier: Apache-2.0

/// A gateway's public key configuration (RFC 9458 §3.1): what a client needs to encrypt to it.
///
/// Served as `application/ohttp-keys` (§3.2): each configuration prefixed with its 2-byte length.
public struct OHTTPKeyConfiguration: Sendable, Equatable {
    /// An HPKE KDF and AEAD pair.
    public struct SymmetricSuite: Sendable, Hashable {
        public var kdf: UInt16
        public var aead: UInt16

        public init(kdf: UInt16, aead: UInt16) {
            self.kdf = kdf
            self.aead = aead
        }
    }

    public var keyID: UInt8
    public var kem: UInt16
    /// The KEM's serialised public key (`SerializePublicKey`: 32 bytes for X25519, 65 for P-256).
    public var publicKey: [UInt8]
    public var suites: [SymmetricSuite]

    public init(keyID: UInt8, kem: UInt16, publicKey: [UInt8], suites: [SymmetricSuite] = OHTTPAlgorithms.allSuites) {
        self.keyID = keyID
        self.kem = kem
        self.publicKey = publicKey
        self.suites = suites
    }

    /// The RFC 9458 §3.1 encoding.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = [keyID, UInt8(kem >> 8), UInt8(kem & 0xFF)]
        bytes += publicKey
        let length = suites.count * 4
        bytes += [UInt8(length >> 8), UInt8(length & 0xFF)]
        for suite in suites {
            bytes += [UInt8(suite.kdf >> 8), UInt8(suite.kdf & 0xFF), UInt8(suite.aead >> 8), UInt8(suite.aead & 0xFF)]
        }
        return bytes
    }

    /// Decodes one configuration; the KEM must be one Signet offers (its key length is known).
    public init(decoding bytes: [UInt8]) throws {
        var reader = ByteReader(bytes)
        self = try Self.read(&reader)
        guard reader.isAtEnd else { throw SignetError(.malformedMessage, "bytes after the key configuration") }
    }

    /// Encodes configurations as `application/ohttp-keys`.
    public static func encodeList(_ configurations: [OHTTPKeyConfiguration]) -> [UInt8] {
        var bytes: [UInt8] = []
        for configuration in configurations {
            let encoded = configuration.encoded()
            bytes += [UInt8(encoded.count >> 8), UInt8(encoded.count & 0xFF)] + encoded
        }
        return bytes
    }

    /// Decodes `application/ohttp-keys`. Configurations with a KEM Signet does not offer are skipped,
    /// as RFC 9458 §3.2 asks of clients; malformed ones refuse the whole list.
    public static func decodeList(_ bytes: [UInt8]) throws -> [OHTTPKeyConfiguration] {
        var reader = ByteReader(bytes)
        var configurations: [OHTTPKeyConfiguration] = []
        while !reader.isAtEnd {
            let length = Int(try reader.uint16())
            var inner = ByteReader(Array(try reader.take(length)))
            var peek = inner
            _ = try peek.byte()
            guard OHTTPAlgorithms.encapsulatedKeyLength(kem: try peek.uint16()) != nil else { continue }
            configurations.append(try read(&inner))
            guard inner.isAtEnd else { throw SignetError(.malformedMessage, "a key configuration is longer than its content") }
        }
        return configurations
    }

    private static func read(_ reader: inout ByteReader) throws -> OHTTPKeyConfiguration {
        let keyID = try reader.byte()
        let kem = try reader.uint16()
        guard let keyLength = OHTTPAlgorithms.encapsulatedKeyLength(kem: kem) else {
            throw SignetError(.malformedMessage, "KEM 0x\(String(kem, radix: 16)) is not offered")
        }
        let publicKey = Array(try reader.take(keyLength))
        let suitesLength = Int(try reader.uint16())
        guard suitesLength >= 4, suitesLength % 4 == 0 else {
            throw SignetError(.malformedMessage, "the symmetric algorithms' length is not a positive multiple of 4")
        }
        var suites: [SymmetricSuite] = []
        for _ in 0..<(suitesLength / 4) {
            suites.append(SymmetricSuite(kdf: try reader.uint16(), aead: try reader.uint16()))
        }
        return OHTTPKeyConfiguration(keyID: keyID, kem: kem, publicKey: publicKey, suites: suites)
    }
}
