// SPDX-License-Identifier: Apache-2.0
import Crypto

/// An Oblivious HTTP request as the gateway opened it (RFC 9458 §4.3, §6), with what it needs to
/// encrypt the answer (§4.4).
public struct ObliviousRequest: Sendable {
    /// `key_id`, `kem_id`, `kdf_id`, `aead_id`: the request's clear header.
    public struct Header: Sendable, Equatable {
        public var keyID: UInt8
        public var kem: UInt16
        public var suite: OHTTPKeyConfiguration.SymmetricSuite

        var encoded: [UInt8] {
            [keyID, UInt8(kem >> 8), UInt8(kem & 0xFF), UInt8(suite.kdf >> 8), UInt8(suite.kdf & 0xFF),
             UInt8(suite.aead >> 8), UInt8(suite.aead & 0xFF)]
        }
    }

    public let header: Header
    /// The encapsulated key: unique per request, so the gateway can refuse a replayed encapsulation.
    public let encapsulatedKey: [UInt8]
    /// The decrypted Binary HTTP request.
    public let message: [UInt8]
    private let secret: SymmetricKey

    /// Opens an encapsulated request with the key its header names.
    ///
    /// - Throws: `ohttp_key_unknown` when no key has that id and KEM, or the suite is not one it
    ///   offers; `decapsulation_failed` for everything else (truncated, tampered, small-order `enc`).
    public init(decapsulating bytes: [UInt8], keys: [OHTTPGatewayKey]) throws {
        var reader = ByteReader(bytes)
        guard bytes.count >= 7 else { throw SignetError(.decapsulationFailed, "shorter than the header") }
        let header = Header(
            keyID: try reader.byte(),
            kem: try reader.uint16(),
            suite: .init(kdf: try reader.uint16(), aead: try reader.uint16())
        )
        guard
            let key = keys.first(where: {
                $0.configuration.keyID == header.keyID && $0.configuration.kem == header.kem
                    && $0.configuration.suites.contains(header.suite)
            })
        else {
            throw SignetError(.ohttpKeyUnknown, "no key configuration \(header.keyID) with that KEM and suite")
        }
        guard let encLength = OHTTPAlgorithms.encapsulatedKeyLength(kem: header.kem), reader.remaining >= encLength + 16
        else { throw SignetError(.decapsulationFailed, "shorter than the encapsulated key and a tag") }
        let encapsulatedKey = Array(try reader.take(encLength))
        let ciphertext = Array(try reader.take(reader.remaining))
        let sizes = OHTTPAlgorithms.aeadSizes(header.suite.aead)
        let opened = try key.open(
            ciphertext: ciphertext,
            encapsulatedKey: encapsulatedKey,
            ciphersuite: try OHTTPAlgorithms.ciphersuite(kem: header.kem, suite: header.suite),
            info: OHTTPAlgorithms.requestInfo(header: header.encoded),
            exportLength: max(sizes.key, sizes.nonce)
        )
        self.header = header
        self.encapsulatedKey = encapsulatedKey
        self.message = opened.plaintext
        self.secret = opened.secret
    }

    /// Encrypts the answer for the client that sent this request.
    ///
    /// - Parameters:
    ///   - response: The Binary HTTP response.
    ///   - responseNonce: Fresh random bytes by default; given only to reproduce known answers.
    public func encapsulateResponse(_ response: [UInt8], responseNonce: [UInt8]? = nil) throws -> [UInt8] {
        let sizes = OHTTPAlgorithms.aeadSizes(header.suite.aead)
        let nonce = responseNonce ?? Array(SymmetricKey(size: .init(bitCount: max(sizes.key, sizes.nonce) * 8)).withUnsafeBytes { Array($0) })
        let keys = OHTTPAlgorithms.responseKeys(
            secret: secret,
            encapsulatedKey: encapsulatedKey,
            responseNonce: nonce,
            aead: header.suite.aead
        )
        return nonce + (try OHTTPAlgorithms.seal(aead: header.suite.aead, key: keys.key, nonce: keys.nonce, plaintext: response))
    }
}
