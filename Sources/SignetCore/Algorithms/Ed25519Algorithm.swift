// SPDX-License-Identifier: Apache-2.0
import Crypto

/// `ed25519` (§3.3.6), PureEdDSA over the signature base.
public struct Ed25519Algorithm: SignatureAlgorithm {
    public init() {}
    public var name: String { "ed25519" }
    public var keyType: KeyType { .ed25519 }

    public func sign(_ base: [UInt8], with key: SigningKey) throws -> [UInt8] {
        guard case .ed25519(let privateKey) = key.storage else { throw mismatch(key.type) }
        return Array(try privateKey.signature(for: base))
    }

    public func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence
    {
        guard case .ed25519(let publicKey) = key.storage else { throw mismatch(key.type) }
        guard publicKey.isValidSignature(signature, for: base) else { throw Self.invalid(name) }
        return .none
    }
}
