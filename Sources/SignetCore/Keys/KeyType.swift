// SPDX-License-Identifier: Apache-2.0

/// The kind of key material, independent of which signature algorithm uses it.
public enum KeyType: String, Sendable, Hashable, CaseIterable {
    case symmetric
    case p256
    case p384
    case ed25519
    case rsa

    /// The algorithm a key of this type is used with when nothing says otherwise (RSA: PSS).
    public var defaultAlgorithm: String {
        switch self {
        case .symmetric: "hmac-sha256"
        case .p256: "ecdsa-p256-sha256"
        case .p384: "ecdsa-p384-sha384"
        case .ed25519: "ed25519"
        case .rsa: "rsa-pss-sha512"
        }
    }
}
