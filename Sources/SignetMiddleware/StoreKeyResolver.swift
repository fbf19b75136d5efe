// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetStore

/// Resolves key ids to configured shared secrets first, then to registered devices.
public struct StoreKeyResolver: KeyResolver {
    /// The device record's attribute holding the Play Integrity flags of its registration.
    static let integrityFlagsAttribute = "play_integrity_flags"

    public let devices: any DeviceStore
    public let sharedSecrets: KeyRing

    /// Times the device lookups (`device_lookup`) when given.
    public let metrics: SignetMetrics?
    /// Whether debug devices (trust level `debug`) are taken; when not, their requests are refused
    /// `trust_level_insufficient`, so a store shared with a staging gateway lends production none.
    public let acceptsDebugDevices: Bool

    public init(
        devices: any DeviceStore,
        sharedSecrets: KeyRing = KeyRing(),
        metrics: SignetMetrics? = nil,
        acceptsDebugDevices: Bool = false
    ) {
        self.devices = devices
        self.sharedSecrets = sharedSecrets
        self.metrics = metrics
        self.acceptsDebugDevices = acceptsDebugDevices
    }

    nonisolated(nonsending) public func records(for keyID: String) async throws -> [KeyRecord] {
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
        if device.trustLevel == .debug, !acceptsDebugDevices {
            throw SignetError(.trustLevelInsufficient, "this gateway takes no debug devices (allowDebugDevices)")
        }
        var record = try device.keyRecord()
        record.owner = KeyOwner(
            deviceID: device.deviceID,
            trustLevel: device.trustLevel,
            user: device.user,
            riskMetric: device.riskMetric,
            integrityFlags: device.attributes[Self.integrityFlagsAttribute]?.split(separator: ",").map(String.init) ?? []
        )
        return [record]
    }
}
