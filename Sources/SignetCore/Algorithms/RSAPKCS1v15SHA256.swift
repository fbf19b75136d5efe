// SPDX-License-Identifier: Apache-2.0
import Crypto
import _CryptoExtras

/// `rsa-v1_5-sha256` (§3.3.2), RSASSA-PKCS1-v1_5 with SHA-256.
public struct RSAPKCS1v15SHA256: SignatureAlgorithm {
    public init() {}
    public var name: String { "rsa-v1_5-sha256" }
    public var keyType: KeyType { .rsa }

    public func sign(_ base: [UInt8], with key: SigningKey) throws -> [UInt8] {
        guard case .rsa(let privateKey) = key.storage else { throw mismatch(key.type) }
        return Array(
            try privateKey.signature(for: SHA256.hash(data: base), padding: .insecurePKCS1v1_5).rawRepresentation
        )
    }

    public func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence
    {
        guard case .rsa(let publicKey) = key.storage else { throw mismatch(key.type) }
        let parsed = _RSA.Signing.RSASignature(rawRepresentation: signature)
        guard publicKey.isValidSignature(parsed, for: SHA256.hash(data: base), padding: .insecurePKCS1v1_5) else {
            throw Self.invalid(name)
        }
        return .none
    }
}
