// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Pin failure reports that say the same thing, counted as one: same host, same reason, same served
/// certificates (by their SPKI pins). A client that fails the same way on every launch, or an
/// attacker replaying one report, adds to a count instead of a row.
public struct PinReportRecord: Sendable, Hashable {
    /// Made from host, reason and served pins (the gateway uses `pr_` and 24 hex digits of their
    /// SHA-256): the same report always lands in the same group, on every instance.
    public var id: String
    /// The host whose pins failed, from the report.
    public var hostname: String
    /// What failed: `no-matching-pin`, `invalid-certificate-chain` (TrustKit's validation results),
    /// `pin-mismatch` (HPKP), `trust-update-refused: <the client's reason>`.
    public var reason: String
    /// The SPKI pins (`sha256/…`) of the served chain, leaf first, space-separated; empty for
    /// reports without a chain.
    public var servedPins: String
    public var count: Int
    public var firstSeen: Date
    public var lastSeen: Date
    /// The client address of the latest report, when known.
    public var source: String?
    /// The first report as received, or a shortened copy when it was larger than ``maximumSampleBytes``.
    public var json: String

    public init(
        id: String,
        hostname: String,
        reason: String,
        servedPins: String,
        count: Int = 1,
        firstSeen: Date,
        lastSeen: Date,
        source: String?,
        json: String
    ) {
        self.id = id
        self.hostname = hostname
        self.reason = reason
        self.servedPins = servedPins
        self.count = count
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.source = source
        self.json = json
    }

    /// How long a group is kept after its last report before a sweep deletes it.
    public static let retention: TimeInterval = 30 * 86_400
    /// The most a group keeps of the report that opened it.
    public static let maximumSampleBytes = 8 * 1024
}
