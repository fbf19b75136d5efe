// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// A P-256 key that signs without giving its private key out: a Secure Enclave key on Apple
/// devices (`SecureEnclaveKeyFactory`), a software key elsewhere (``SoftwareKeyFactory``).
public protocol DeviceSigningKey: Sendable {
    var publicKey: P256.Signing.PublicKey { get }
    /// ECDSA P-256 with SHA-256 over `data`, raw `r‖s` (64 bytes), as RFC 9421 carries it.
    func signature(for data: [UInt8]) throws -> [UInt8]
}

/// Makes device keys and finds them again from what was kept of them: for a Secure Enclave key an
/// opaque reference only that enclave can use, for a software key its bytes.
public protocol DeviceKeyFactory: Sendable {
    /// A new key and what to keep (in the Keychain) to find it on the next launch.
    func make() throws -> (key: any DeviceSigningKey, kept: Data)
    /// The key kept as `kept`.
    func restore(_ kept: Data) throws -> any DeviceSigningKey
}

/// P-256 keys in this process's memory, kept as their raw bytes: for Linux, macOS tools, and
/// devices without a Secure Enclave where the app allows it.
///
/// - Important: Kept bytes are the private key. Keep them only in a ``SecureValueStore`` that
///   never leaves the device (`KeychainValueStore` does not).
public struct SoftwareKeyFactory: DeviceKeyFactory {
    public init() {}

    struct Key: DeviceSigningKey {
        let privateKey: P256.Signing.PrivateKey
        var publicKey: P256.Signing.PublicKey { privateKey.publicKey }
        func signature(for data: [UInt8]) throws -> [UInt8] {
            Array(try privateKey.signature(for: data).rawRepresentation)
        }
    }

    public func make() throws -> (key: any DeviceSigningKey, kept: Data) {
        let key = P256.Signing.PrivateKey()
        return (Key(privateKey: key), key.rawRepresentation)
    }

    public func restore(_ kept: Data) throws -> any DeviceSigningKey {
        Key(privateKey: try P256.Signing.PrivateKey(rawRepresentation: kept))
    }
}

/// No key can be made here: a device without a Secure Enclave whose app allows no software key.
/// Registering refuses with `alg_unsupported`; a key kept from elsewhere is not opened.
public struct UnavailableKeyFactory: DeviceKeyFactory {
    public init() {}

    public func make() throws -> (key: any DeviceSigningKey, kept: Data) {
        throw SignetError(
            .algUnsupported,
            "this device has no Secure Enclave (the simulator?) and the app allows no software key: use the debug provider there"
        )
    }

    public func restore(_ kept: Data) throws -> any DeviceSigningKey {
        try make().key
    }
}
