// SPDX-License-Identifier: Apache-2.0
import Crypto

/// `ecdsa-p384-sha384` (§3.3.5): raw r‖s, 96 bytes.
public struct ECDSAP384SHA384: SignatureAlgorithm {
    public init() {}
    public var name: String { "ecdsa-p384-sha384" }
    public var keyType: KeyType { .p384 }

    public func sign(_ base: [UInt8], with key: SigningKey) throws -> [UInt8] {
        guard case .p384(let privateKey) = key.storage else { throw mismatch(key.type) }
        return Array(try privateKey.signature(for: base).rawRepresentation)
    }

    public func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence
    {
        guard case .p384(let publicKey) = key.storage else { throw mismatch(key.type) }
        guard signature.count == 96, let parsed = try? P384.Signing.ECDSASignature(rawRepresentation: signature),
            publicKey.isValidSignature(parsed, for: base)
        else { throw Self.invalid(name) }
        return .none
    }
}
