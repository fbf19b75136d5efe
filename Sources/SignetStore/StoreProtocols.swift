// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// One-time server challenges (DESIGN.md lifecycle step 1).
public protocol ChallengeStore: Sendable {
    /// Stores a new challenge, unless `limit` unexpired ones are outstanding (`rate_limited`), so an
    /// unauthenticated flood cannot grow the store without bound.
    func issueChallenge(_ value: String, expiresAt: Date, now: Date, limit: Int) async throws

    /// Consumes a challenge exactly once: of concurrent calls with one value, one succeeds.
    ///
    /// - Throws: `challenge_unknown` (never issued, or already used) or `challenge_expired`.
    func consumeChallenge(_ value: String, now: Date) async throws
}

/// Registered devices: public key, algorithm, trust level, counter, status.
public protocol DeviceStore: CounterStore {
    /// Adds a device. Throws `device_exists` when its device id or key id is taken.
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

/// Pin failure reports that clients sent to `POST /signet/v1/pin-reports`.
public protocol PinReportStore: Sendable {
    func storePinReport(_ report: PinReportRecord) async throws
    /// The newest reports first.
    func pinReports(limit: Int) async throws -> [PinReportRecord]
}

/// One stored pin failure report (the TrustKit/HPKP JSON as received, after validation).
public struct PinReportRecord: Sendable, Hashable {
    public var id: String
    public var receivedAt: Date
    /// The host whose pins failed, from the report.
    public var hostname: String
    /// The client address, when known.
    public var source: String?
    public var json: String

    public init(id: String, receivedAt: Date, hostname: String, source: String?, json: String) {
        self.id = id
        self.receivedAt = receivedAt
        self.hostname = hostname
        self.source = source
        self.json = json
    }

    /// How long reports are kept before a sweep deletes them.
    public static let retention: TimeInterval = 30 * 86_400
}

/// Everything a Signet server keeps. Each replay guard is atomic in the store itself.
public protocol SignetStorage: ChallengeStore, DeviceStore, NonceStore, PinReportStore {
    /// Deletes expired challenges, nonces and pin reports; returns how many rows went.
    func sweep(now: Date) async throws -> Int
    /// Releases connections.
    func shutdown() async throws
}
