// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The audit log of the operator console: appended to, never changed, kept until an operator
/// archives it (no sweep deletes it).
public protocol AuditStore: Sendable {
    func appendAudit(_ record: AuditRecord) async throws
    /// Revokes a device and appends its `device.revoke` entry as one change: both are written or
    /// neither. False, with nothing written, when no device has the id. A revoked device keeps the
    /// time of its first revocation.
    func revokeDevice(id: String, at time: Date, by actor: String, source: String?) async throws -> Bool
    /// The newest entries first, older than `before` (an id) when given.
    func auditRecords(before: Int64?, limit: Int) async throws -> [AuditRecord]
}
