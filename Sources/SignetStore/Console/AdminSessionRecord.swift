// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A signed-in operator console session. The store keeps the SHA-256 of the cookie's value, never
/// the value, so reading the database does not sign anyone in.
public struct AdminSessionRecord: Sendable, Hashable {
    /// Hex SHA-256 of the session cookie's value.
    public var idHash: String
    /// The token every change must carry (a form field), against cross-site request forgery.
    public var csrfToken: String
    public var actor: String
    public var createdAt: Date
    public var expiresAt: Date

    public init(idHash: String, csrfToken: String, actor: String, createdAt: Date, expiresAt: Date) {
        self.idHash = idHash
        self.csrfToken = csrfToken
        self.actor = actor
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
