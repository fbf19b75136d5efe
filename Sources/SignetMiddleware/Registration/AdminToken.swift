// SPDX-License-Identifier: Apache-2.0
import Crypto
import Hummingbird
import SignetCore

/// The bearer token of the admin API (device revocation, pin reports), compared in constant time.
public struct AdminToken: Sendable {
    /// `nil`: the admin API is off.
    public let token: String?

    public init(_ token: String?) {
        self.token = token
    }

    /// `admin-token <first 12 hex digits of its SHA-256>`: who acted, in the audit log and the
    /// console's sessions. Tells tokens apart, and a session of a token ends when it is changed,
    /// without the token itself written anywhere.
    public var actor: String {
        "admin-token " + Hex.encode(SHA256.hash(data: Array((token ?? "").utf8))).prefix(12)
    }

    /// Throws `not_found` when the admin API is off, `admin_unauthorized` without the right token.
    public func authorize(_ request: Request) throws {
        guard let token else { throw SignetError(.notFound, "the admin API is not enabled") }
        let presented = request.headers[.authorization] ?? ""
        guard ConstantTime.equals(Array(presented.utf8), Array("Bearer \(token)".utf8)) else {
            throw SignetError(.adminUnauthorized, "the admin token is missing or wrong")
        }
    }
}
