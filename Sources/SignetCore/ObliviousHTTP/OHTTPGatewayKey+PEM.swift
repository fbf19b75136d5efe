// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

extension OHTTPGatewayKey.PrivateKey {
    /// PKCS #8 of an X25519 key is a fixed 16-byte prefix and the 32-byte key (RFC 8410), which is
    /// what `openssl genpkey -algorithm X25519` writes; swift-crypto reads no PEM for X25519.
    private static let x25519PKCS8Prefix: [UInt8] = [
        0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x6E, 0x04, 0x22, 0x04, 0x20,
    ]

    /// An X25519 or P-256 private key from PEM (PKCS #8, or SEC 1 for P-256).
    ///
    /// - Throws: `invalid_key` for anything else.
    public init(pem: String) throws {
        let blocks = pem.components(separatedBy: "-----BEGIN PRIVATE KEY-----")
        if blocks.count == 2, let end = blocks[1].range(of: "-----END PRIVATE KEY-----"),
            let der = Base64.decode(String(blocks[1][..<end.lowerBound]).filter { !$0.isWhitespace }),
            der.count == 48, Array(der.prefix(16)) == Self.x25519PKCS8Prefix
        {
            self = .x25519(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: der.suffix(32)))
            return
        }
        if let key = try? P256.KeyAgreement.PrivateKey(pemRepresentation: pem) {
            self = .p256(key)
            return
        }
        throw SignetError(.invalidKey, "not an X25519 or P-256 private key in PEM")
    }

    /// PKCS #8 PEM, as `signet keygen --alg hpke-x25519|hpke-p256` writes it.
    public var pemRepresentation: String {
        switch self {
        case .x25519(let key):
            let base64 = Base64.encode(Self.x25519PKCS8Prefix + Array(key.rawRepresentation))
            return "-----BEGIN PRIVATE KEY-----\n\(base64)\n-----END PRIVATE KEY-----\n"
        case .p256(let key):
            return key.pemRepresentation + "\n"
        }
    }
}
