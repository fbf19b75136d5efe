// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetStore

/// Resolves key ids to configured shared secrets first, then to registered devices.
public struct StoreKeyResolver: KeyResolver {
    public let devices: any DeviceStore
    public let sharedSecrets: KeyRing

    public init(devices: any DeviceStore, sharedSecrets: KeyRing = KeyRing()) {
        self.devices = devices
        self.sharedSecrets = sharedSecrets
    }

    public func records(for keyID: String) async throws -> [KeyRecord] {
        let configured = try await sharedSecrets.records(for: keyID)
        if !configured.isEmpty {
            return configured.map { record in
                var record = record
                record.owner = KeyOwner(trustLevel: .sharedSecret)
                return record
            }
        }
        guard let device = try await devices.device(keyID: keyID) else { return [] }
        var record = try device.keyRecord()
        record.owner = KeyOwner(
            deviceID: device.deviceID,
            trustLevel: device.trustLevel,
            user: device.user,
            riskMetric: device.riskMetric
        )
        return [record]
    }
}
