// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The audit log of the operator console: appended to, never changed, kept until an operator
/// archives it (no sweep deletes it).
public protocol AuditStore: Sendable {
    func appendAudit(_ record: AuditRecord) async throws
    /// The newest entries first, older than `before` (an id) when given.
    func auditRecords(before: Int64?, limit: Int) async throws -> [AuditRecord]
}
