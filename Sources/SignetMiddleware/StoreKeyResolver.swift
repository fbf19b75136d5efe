// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetStore

/// Resolves key ids to configured shared secrets first, then to registered devices.
public struct StoreKeyResolver: KeyResolver {
    public let devices: any DeviceStore
    public let sharedSecrets: KeyRing

    /// Times the device lookups (`device_lookup`) when given.
    public let metrics: SignetMetrics?

    public init(devices: any DeviceStore, sharedSecrets: KeyRing = KeyRing(), metrics: SignetMetrics? = nil) {
        self.devices = devices
        self.sharedSecrets = sharedSecrets
        self.metrics = metrics
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
        let started = ContinuousClock.now
        let found: DeviceRecord?
        do {
            found = try await devices.device(keyID: keyID)
            metrics?.recordStore("device_lookup", duration: ContinuousClock.now - started, failed: false)
        } catch {
            metrics?.recordStore("device_lookup", duration: ContinuousClock.now - started, failed: true)
            throw error
        }
        guard let device = found else { return [] }
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
