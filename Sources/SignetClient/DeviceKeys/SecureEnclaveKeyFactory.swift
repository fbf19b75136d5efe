// SPDX-License-Identifier: Apache-2.0
#if canImport(CryptoKit) && canImport(Darwin)
import CryptoKit
import Foundation

/// Keys generated inside the Secure Enclave (`SecureEnclave.P256.Signing`): the private key never
/// exists outside it; what is kept is the enclave's opaque `dataRepresentation`, usable only by this
/// device's enclave. The shim; ``DeviceKeyProvider`` holds the logic and is tested with
/// ``SoftwareKeyFactory``.
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *)
public struct SecureEnclaveKeyFactory: DeviceKeyFactory {
    /// Whether this device has a Secure Enclave (not the simulator, not Macs without T2 or Apple silicon).
    public static var isAvailable: Bool { SecureEnclave.isAvailable }

    public init() {}

    struct Key: DeviceSigningKey {
        let privateKey: SecureEnclave.P256.Signing.PrivateKey
        var publicKey: P256.Signing.PublicKey { privateKey.publicKey }
        func signature(for data: [UInt8]) throws -> [UInt8] {
            Array(try privateKey.signature(for: Data(data)).rawRepresentation)
        }
    }

    public func make() throws -> (key: any DeviceSigningKey, kept: Data) {
        let key = try SecureEnclave.P256.Signing.PrivateKey()
        return (Key(privateKey: key), key.dataRepresentation)
    }

    public func restore(_ kept: Data) throws -> any DeviceSigningKey {
        Key(privateKey: try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: kept))
    }
}
#endif
