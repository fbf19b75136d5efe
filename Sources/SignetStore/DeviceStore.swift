// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Registered devices: public key, algorithm, trust level, counter, status.
public protocol DeviceStore: CounterStore {
    /// Adds a device. Throws `device_exists` when its device id or key id is taken, and
    /// `credentials_invalid` when it names a ``DeviceRecord/user`` whose account no longer exists
    /// (checked in the same step as the insert).
    func registerDevice(_ device: DeviceRecord) async throws
    func device(keyID: String) async throws -> DeviceRecord?
    func device(id: String) async throws -> DeviceRecord?
    /// Marks the device revoked; `false` when there is no such device.
    func revokeDevice(id: String, at time: Date) async throws -> Bool
}

extension CounterStore {
    /// The strict rule: `value` must exceed every earlier counter.
    public func advanceCounter(deviceID: String, to value: UInt64) async throws -> Bool {
        try await advanceCounter(deviceID: deviceID, to: value, window: 0)
    }
}
