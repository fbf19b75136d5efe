// SPDX-License-Identifier: Apache-2.0
import Foundation

/// An agent's published keys (Web Bot Auth §5.5): a JWK Set, each key found by its RFC 7638
/// thumbprint — the `keyid` an agent's signature gives.
public struct AgentKeyDirectory: Sendable {
    /// One published key, with the RFC 9421 algorithm it verifies and its validity where stated.
    public struct Key: Sendable {
        public var key: VerificationKey
        public var algorithm: String
        public var notBefore: Date?
        public var notAfter: Date?
    }

    /// By RFC 7638 thumbprint.
    public let keys: [String: Key]

    /// A directory body may not be larger, nor hold more keys.
    public static let maximumBytes = 64 * 1024
    public static let maximumKeys = 32

    /// Reads a directory body. A key Signet cannot use (a symmetric one, an unknown type, a `kid`
    /// that is not its thumbprint, an `alg` Signet does not verify) is left out, not the set.
    ///
    /// - Throws: `malformed_message` for a body that is not a JWK Set within the bounds.
    public init(json body: [UInt8]) throws {
        guard body.count <= Self.maximumBytes else {
            throw SignetError(.malformedMessage, "the key directory is larger than \(Self.maximumBytes) bytes")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let entries = object["keys"] as? [[String: Any]]
        else { throw SignetError(.malformedMessage, "the key directory is not a JWK Set") }
        guard entries.count <= Self.maximumKeys else {
            throw SignetError(.malformedMessage, "the key directory holds more than \(Self.maximumKeys) keys")
        }
        var keys: [String: Key] = [:]
        for entry in entries {
            guard let data = try? JSONSerialization.data(withJSONObject: entry), let jwk = try? JWK(json: Array(data)),
                !jwk.hasPrivateMembers, let key = try? VerificationKey(jwk: jwk), key.type != .symmetric,
                let thumbprint = try? key.jwk.thumbprint, jwk.kid == nil || jwk.kid == thumbprint
            else { continue }
            // The directory's `alg` is an RFC 9421 name (a JOSE one is read too); without one the
            // key's type decides.
            let algorithm = jwk.alg.map { alg in (try? JOSESignatureAlgorithm.rfc9421Algorithm(for: key, alg: alg)) ?? alg }
                ?? key.type.defaultAlgorithm
            guard SignatureAlgorithms.standard.names.contains(algorithm), algorithm != "hmac-sha256" else { continue }
            if key.type == .rsa {
                // As for keys a request delivers: bounded, as anyone may publish one.
                let modulus = (jwk.n.flatMap(Base64.urlDecode) ?? []).drop { $0 == 0 }
                guard (256...512).contains(modulus.count) else { continue }
            }
            keys[thumbprint] = Key(
                key: key,
                algorithm: algorithm,
                notBefore: (entry["nbf"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) },
                notAfter: (entry["exp"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) }
            )
        }
        self.keys = keys
    }
}
