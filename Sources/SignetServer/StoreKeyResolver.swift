// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetStore

/// Resolves key ids to configured shared secrets first, then to registered devices.
public struct StoreKeyResolver: KeyResolver {
    static let deviceIDAttribute = "device_id"
    static let trustLevelAttribute = "trust_level"

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
                record.attributes[Self.trustLevelAttribute] = TrustLevel.sharedSecret.rawValue
                return record
            }
        }
        guard let device = try await devices.device(keyID: keyID) else { return [] }
        var record = try device.keyRecord()
        record.attributes[Self.deviceIDAttribute] = device.deviceID
        record.attributes[Self.trustLevelAttribute] = device.trustLevel.rawValue
        return [record]
    }
}
