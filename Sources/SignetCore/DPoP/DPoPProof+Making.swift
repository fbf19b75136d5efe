// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

extension DPoPProof {
    /// A proof for one request, signed by `sign` — a key that need not leave its keystore (the
    /// client SDK passes a Secure Enclave key's signing function).
    ///
    /// - Parameters:
    ///   - publicKey: The key `sign` signs for; its public JWK goes in the header.
    ///   - alg: The JOSE name of the algorithm (`ES256`, `EdDSA`…), one of ``algorithms``.
    ///   - sign: Signs the JWS signing input as JOSE expects (raw `r‖s` for ECDSA).
    ///   - method: The request's method.
    ///   - url: The request's URL; query and fragment are left out of `htu` (RFC 9449 §4.2).
    ///   - accessToken: The access token the request carries, hashed into `ath`.
    ///   - nonce: The server's latest `DPoP-Nonce`, when it asked for one.
    ///   - now: The proof's `iat`.
    ///   - jti: A fresh unique id; random when `nil`.
    public static func make(
        publicKey: VerificationKey,
        alg: String,
        sign: ([UInt8]) throws -> [UInt8],
        method: String,
        url: String,
        accessToken: String?,
        nonce: String?,
        now: Date,
        jti: String? = nil
    ) throws -> String {
        guard let algorithm = algorithms[alg], algorithm.keyType == publicKey.type else {
            throw SignetError(.algUnsupported, "\(alg) is not a DPoP algorithm for a \(publicKey.type.rawValue) key")
        }
        var htu = Substring(url)
        if let cut = htu.firstIndex(where: { $0 == "?" || $0 == "#" }) { htu = htu[..<cut] }
        var header = JSONObjectWriter()
        header.add("typ", type)
        header.add("alg", alg)
        header.addRaw("jwk", publicKey.jwk.jsonString)
        var claims = JSONObjectWriter()
        claims.add("jti", jti ?? Base64.urlEncode((0..<16).map { _ in UInt8.random(in: .min ... .max) }))
        claims.add("htm", method)
        claims.add("htu", String(htu))
        claims.addRaw("iat", String(Int(now.timeIntervalSince1970.rounded(.down))))
        if let accessToken { claims.add("ath", Base64.urlEncode(SHA256.hash(data: Array(accessToken.utf8)))) }
        if let nonce { claims.add("nonce", nonce) }
        return try CompactJWS.make(header: header, payload: claims, sign: sign)
    }

    /// A proof signed by a key in memory.
    public static func make(
        key: SigningKey,
        method: String,
        url: String,
        accessToken: String?,
        nonce: String? = nil,
        now: Date,
        jti: String? = nil
    ) throws -> String {
        let (alg, sign) = try CompactJWS.signer(for: key)
        return try make(
            publicKey: key.verificationKey,
            alg: alg,
            sign: sign,
            method: method,
            url: url,
            accessToken: accessToken,
            nonce: nonce,
            now: now,
            jti: jti
        )
    }
}
