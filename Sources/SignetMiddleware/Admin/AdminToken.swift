// SPDX-License-Identifier: Apache-2.0
import Crypto
import Hummingbird
import SignetCore

/// The bearer token of the admin API (device revocation, users, pin reports), compared in constant time.
public struct AdminToken: Sendable {
    /// The shortest token the gateway starts with outside development: 32 characters, about 190 bits
    /// when random base64url (`signet keygen` and `openssl rand -base64 32` give more).
    public static let minimumLength = 32

    /// `nil`: the admin API is off.
    public let token: String?

    /// An empty token is no token: the admin API stays off rather than open to `Bearer `.
    public init(_ token: String?) {
        self.token = token?.isEmpty == true ? nil : token
    }

    /// `admin-token <first 12 hex digits of its SHA-256>`: who acted, in the audit log and the
    /// console's sessions. Tells tokens apart, and a session of a token ends when it is changed,
    /// without the token itself written anywhere.
    public var actor: String {
        "admin-token " + Hex.encode(SHA256.hash(data: Array((token ?? "").utf8))).prefix(12)
    }

    /// Whether `presented` is the token (never true when there is none).
    public func matches(_ presented: String) -> Bool {
        guard let token else { return false }
        return ConstantTime.equals(Array(presented.utf8), Array(token.utf8))
    }
}
