// SPDX-License-Identifier: Apache-2.0

/// The kind of key material, independent of which signature algorithm uses it.
public enum KeyType: String, Sendable, Hashable, CaseIterable {
    case symmetric
    case p256
    case p384
    case ed25519
    case rsa
}
