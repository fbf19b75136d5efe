// SPDX-License-Identifier: Apache-2.0
import Foundation

/// One change an operator made: who, what, to what, when.
public struct AuditRecord: Sendable, Hashable {
    /// Assigned by the store, increasing; 0 before it is stored.
    public var id: Int64
    public var at: Date
    /// Who made it: `admin-token <hash prefix>`, or `certificate sha256/<pin>` for an operator's certificate.
    public var actor: String
    /// What was done, as a stable verb (`device.revoke`, `console.sign-in`).
    public var action: String
    /// What it was done to (a device id); empty when nothing in particular.
    public var target: String
    /// The client address the change came from.
    public var source: String?

    public init(id: Int64 = 0, at: Date, actor: String, action: String, target: String, source: String? = nil) {
        self.id = id
        self.at = at
        self.actor = actor
        self.action = action
        self.target = target
        self.source = source
    }
}
