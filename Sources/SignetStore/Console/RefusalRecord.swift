// SPDX-License-Identifier: Apache-2.0
import Foundation

/// One refused request as the operator console lists it: when, why, where, who claimed to ask.
///
/// Never a signature, a secret, a query string or a body: only what names the request.
public struct RefusalRecord: Sendable, Hashable {
    /// Assigned by the store, increasing; 0 before it is stored.
    public var id: Int64
    public var at: Date
    /// The reason code (`signature_invalid`, …).
    public var reason: String
    /// The HTTP status answered.
    public var status: Int
    public var method: String
    /// The path without its query, cut to ``maximumPathLength``.
    public var path: String
    /// The key id the request named, when it named one.
    public var keyID: String?
    /// The client address.
    public var source: String?
    /// The gateway instance that refused it (`instance`, the host name by default): which of
    /// several behind a balancer to look at.
    public var instance: String?
    /// A `monitor` route forwarded the request: this is a refusal enforcing would have made.
    public var monitored: Bool

    public init(
        id: Int64 = 0,
        at: Date,
        reason: String,
        status: Int,
        method: String,
        path: String,
        keyID: String? = nil,
        source: String? = nil,
        instance: String? = nil,
        monitored: Bool = false
    ) {
        self.id = id
        self.at = at
        self.reason = String(reason.prefix(64))
        self.status = status
        self.method = String(method.prefix(16))
        // Never the query: it carries legacy MACs and tokens.
        self.path = String(path.prefix { $0 != "?" }.prefix(Self.maximumPathLength))
        self.keyID = keyID.map { String($0.prefix(Self.maximumKeyIDLength)) }
        self.source = source.map { String($0.prefix(64)) }
        self.instance = instance.map { String($0.prefix(Self.maximumInstanceLength)) }
        self.monitored = monitored
    }

    public static let maximumPathLength = 256
    public static let maximumKeyIDLength = 128
    public static let maximumInstanceLength = 64
    /// How long refusals are kept before a sweep deletes them.
    public static let retention: TimeInterval = 7 * 86_400
    /// How many refusals a store keeps at most; a sweep deletes the oldest beyond it.
    public static let maximumKept = 1_000_000
}
