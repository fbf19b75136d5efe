// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// A request encrypted to a gateway's key configuration (RFC 9458 §4.3), keeping what is needed to
/// open the answer (§4.4).
public struct ObliviousClientRequest: Sendable {
    /// `message/ohttp-req`: the header, the encapsulated key and the ciphertext.
    public let bytes: [UInt8]
    private let encapsulatedKey: [UInt8]
    private let aead: UInt16
    private let secret: SymmetricKey

    /// - Parameters:
    ///   - message: The Binary HTTP request.
    ///   - configuration: The gateway's key configuration.
    ///   - suite: One the configuration offers; the first Signet supports when `nil`.
    public init(
        encapsulating message: [UInt8],
        to configuration: OHTTPKeyConfiguration,
        suite: OHTTPKeyConfiguration.SymmetricSuite? = nil
    ) throws {
        guard
            let suite = suite ?? configuration.suites.first(where: { OHTTPAlgorithms.allSuites.contains($0) }),
            configuration.suites.contains(suite)
        else { throw SignetError(.ohttpKeyUnknown, "the key configuration offers no suite Signet supports") }
        let header = ObliviousRequest.Header(keyID: configuration.keyID, kem: configuration.kem, suite: suite).encoded
        let ciphersuite = try OHTTPAlgorithms.ciphersuite(kem: configuration.kem, suite: suite)
        let info = Data(OHTTPAlgorithms.requestInfo(header: header))
        let sizes = OHTTPAlgorithms.aeadSizes(suite.aead)
        let exportLength = max(sizes.key, sizes.nonce)
        var sender: HPKE.Sender
        do {
            switch configuration.kem {
            case OHTTPAlgorithms.kemX25519:
                let key = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: configuration.publicKey)
                sender = try HPKE.Sender(recipientKey: key, ciphersuite: ciphersuite, info: info)
            default:
                let key = try P256.KeyAgreement.PublicKey(x963Representation: configuration.publicKey)
                sender = try HPKE.Sender(recipientKey: key, ciphersuite: ciphersuite, info: info)
            }
        } catch {
            throw SignetError(.invalidKey, "the key configuration's public key is not a valid KEM key")
        }
        let ciphertext = try sender.seal(message, authenticating: Data())
        self.encapsulatedKey = Array(sender.encapsulatedKey)
        self.bytes = header + encapsulatedKey + Array(ciphertext)
        self.aead = suite.aead
        self.secret = try sender.exportSecret(context: OHTTPAlgorithms.responseExportLabel, outputByteCount: exportLength)
    }

    /// Decrypts the gateway's `message/ohttp-res` answer to this request.
    ///
    /// - Throws: `decapsulation_failed` when it is truncated or does not decrypt.
    public func openResponse(_ response: [UInt8]) throws -> [UInt8] {
        let sizes = OHTTPAlgorithms.aeadSizes(aead)
        let nonceLength = max(sizes.key, sizes.nonce)
        guard response.count >= nonceLength + 16 else {
            throw SignetError(.decapsulationFailed, "the response is shorter than its nonce and tag")
        }
        let keys = OHTTPAlgorithms.responseKeys(
            secret: secret,
            encapsulatedKey: encapsulatedKey,
            responseNonce: Array(response[..<nonceLength]),
            aead: aead
        )
        return try OHTTPAlgorithms.open(aead: aead, key: keys.key, nonce: keys.nonce, sealed: Array(response[nonceLength...]))
    }
}
