// SPDX-License-Identifier: Apache-2.0
import Crypto
import _CryptoExtras

/// `rsa-pss-sha512` (§3.3.1): MGF1 with SHA-512 and a 64-byte salt.
public struct RSAPSSSHA512: SignatureAlgorithm {
    public init() {}
    public var name: String { "rsa-pss-sha512" }
    public var keyType: KeyType { .rsa }

    public func sign(_ base: [UInt8], with key: SigningKey) throws -> [UInt8] {
        guard case .rsa(let privateKey) = key.storage else { throw mismatch(key.type) }
        // swift-crypto's PSS uses a salt as long as the digest: 64 bytes for SHA-512, as the RFC says.
        return Array(try privateKey.signature(for: SHA512.hash(data: base), padding: .PSS).rawRepresentation)
    }

    public func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence
    {
        guard case .rsa(let publicKey) = key.storage else { throw mismatch(key.type) }
        let parsed = _RSA.Signing.RSASignature(rawRepresentation: signature)
        guard publicKey.isValidSignature(parsed, for: SHA512.hash(data: base), padding: .PSS) else {
            throw Self.invalid(name)
        }
        return .none
    }
}
