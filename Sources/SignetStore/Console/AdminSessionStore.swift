// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Operator console sessions, shared by every gateway instance on the store; a sweep deletes expired ones.
public protocol AdminSessionStore: Sendable {
    func createAdminSession(_ session: AdminSessionRecord) async throws
    /// The session, while it has not expired.
    func adminSession(idHash: String, now: Date) async throws -> AdminSessionRecord?
    func deleteAdminSession(idHash: String) async throws
}
