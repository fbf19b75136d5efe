// SPDX-License-Identifier: Apache-2.0
import Crypto

/// `hmac-sha256` (RFC 9421 §3.3.3). Verification compares in constant time.
public struct HMACSHA256: SignatureAlgorithm {
    public init() {}
    public var name: String { "hmac-sha256" }
    public var keyType: KeyType { .symmetric }

    public func sign(_ base: [UInt8], with key: SigningKey) throws -> [UInt8] {
        guard case .symmetric(let secret) = key.storage else { throw mismatch(key.type) }
        return secret.authenticationCode(for: base)
    }

    public func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence
    {
        guard case .symmetric(let secret) = key.storage else { throw mismatch(key.type) }
        guard secret.authenticates(base, code: signature) else {
            throw Self.invalid(name)
        }
        return .none
    }
}
