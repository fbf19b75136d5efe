// SPDX-License-Identifier: Apache-2.0

/// The JOSE names of the algorithms Signet verifies, as a delivered key states them
/// (draft-hardt-httpbis-signature-key-08 §3.3): fully specified, the key's type and curve matching.
public enum JOSESignatureAlgorithm {
    /// JOSE name, the RFC 9421 algorithm Signet verifies it with, and the key type it needs.
    static let table: [(jose: String, signet: String, type: KeyType)] = [
        ("Ed25519", "ed25519", .ed25519),
        ("ES256", "ecdsa-p256-sha256", .p256),
        ("ES384", "ecdsa-p384-sha384", .p384),
        ("PS512", "rsa-pss-sha512", .rsa),
        ("RS256", "rsa-v1_5-sha256", .rsa),
    ]

    /// What `Accept-Signature-Alg` lists, in preference order.
    public static var names: [String] { table.map(\.jose) }

    /// The RFC 9421 algorithm for `key`'s `alg`.
    ///
    /// - Throws: `alg_unsupported` for an `alg` Signet does not verify (`EdDSA`, which §3.3 forbids;
    ///   `none`; symmetric ones) or none at all; `alg_mismatch` for a key of another type or curve.
    public static func rfc9421Algorithm(for key: VerificationKey, alg: String?) throws -> String {
        guard let alg else { throw SignetError(.algUnsupported, "the delivered key names no alg") }
        guard let entry = table.first(where: { $0.jose == alg }) else {
            throw SignetError(.algUnsupported, "alg \(alg.debugDescription) is not one Signet verifies (\(names.joined(separator: ", ")))")
        }
        guard key.type == entry.type else {
            throw SignetError(.algMismatch, "alg \(alg) needs a \(entry.type.rawValue) key, the key is \(key.type.rawValue)")
        }
        return entry.signet
    }

    /// The JOSE name Signet gives a key of `type` whose record names no `alg` (its own attestations):
    /// `ES256` for P-256, `Ed25519`, `ES384`; `nil` for RSA, whose padding a key does not tell.
    public static func name(for type: KeyType) -> String? {
        switch type {
        case .ed25519: "Ed25519"
        case .p256: "ES256"
        case .p384: "ES384"
        default: nil
        }
    }
}
