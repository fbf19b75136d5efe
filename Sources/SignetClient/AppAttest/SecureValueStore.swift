// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Small values an app keeps across launches, on this device only: the App Attest key id and the
/// registered device (``AppAttestLifecycle``), a device key's reference (``DeviceKeyProvider``). On
/// Apple platforms `KeychainValueStore` (`…ThisDeviceOnly`, never in a backup that could move it to
/// another phone); ``MemoryValueStore`` in tests and processes that keep nothing.
public protocol SecureValueStore: Sendable {
    func value(for name: String) async throws -> Data?
    /// Stores `value` under `name`; `nil` removes it.
    func set(_ value: Data?, for name: String) async throws
}

/// A ``SecureValueStore`` in this process's memory: nothing survives it. For tests (one instance
/// shared by two lifecycles stands in for a relaunch) and for tools.
public final class MemoryValueStore: SecureValueStore {
    private let values = Locked<[String: Data]>([:])

    public init() {}

    public func value(for name: String) async throws -> Data? {
        values.withLock { $0[name] }
    }

    public func set(_ value: Data?, for name: String) async throws {
        values.withLock { $0[name] = value }
    }
}
