// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware
import SignetStore

/// Maps a mutual-TLS client certificate to an active device: issued by the device CA, within its
/// validity, the device's current certificate (serial stored at registration), the device not
/// revoked. The store is asked on every call, so a revocation applies at once on every instance.
public struct ClientCertificateVerifier: Sendable {
    public let deviceCA: DeviceCertificateAuthority
    public let devices: any DeviceStore

    public init(deviceCA: DeviceCertificateAuthority, devices: any DeviceStore) {
        self.deviceCA = deviceCA
        self.devices = devices
    }

    /// - Parameters:
    ///   - presented: The peer certificate (DER) from the TLS layer, `nil` when none.
    ///   - now: The time the certificate must be valid at.
    public func identity(presented: [UInt8]?, now: Date) async throws -> SignetIdentity {
        guard let presented else {
            throw SignetError(.clientCertificateRequired, "this route needs a client certificate (mutual TLS)")
        }
        let (deviceID, serial) = try await deviceCA.verify(clientCertificateDER: presented, now: now)
        guard let device = try await devices.device(id: deviceID) else {
            throw SignetError(.clientCertificateUntrusted, "the certificate's device is not registered")
        }
        guard device.status == .active else {
            throw SignetError(.keyRevoked, "the device \(deviceID) is revoked")
        }
        guard let current = device.attributes["certificate_serial"],
            ConstantTime.equals(Array(current.utf8), Array(serial.utf8))
        else {
            throw SignetError(.clientCertificateUntrusted, "the certificate is not the device's current one")
        }
        return SignetIdentity(
            deviceID: deviceID,
            keyID: device.keyID,
            trustLevel: .clientCertificate,
            algorithm: "mtls",
            user: device.user
        )
    }
}
