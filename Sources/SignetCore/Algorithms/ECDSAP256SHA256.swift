// SPDX-License-Identifier: Apache-2.0
import Crypto

/// `ecdsa-p256-sha256` (§3.3.4): the signature is raw r‖s, 64 bytes, never DER.
public struct ECDSAP256SHA256: SignatureAlgorithm {
    public init() {}
    public var name: String { "ecdsa-p256-sha256" }
    public var keyType: KeyType { .p256 }

    public func sign(_ base: [UInt8], with key: SigningKey) throws -> [UInt8] {
        guard case .p256(let privateKey) = key.storage else { throw mismatch(key.type) }
        return Array(try privateKey.signature(for: base).rawRepresentation)
    }

    public func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence
    {
        guard case .p256(let publicKey) = key.storage else { throw mismatch(key.type) }
        guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            publicKey.isValidSignature(parsed, for: base)
        else { throw Self.invalid(name) }
        return .none
    }
}
