// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Which bearer tokens a route takes in place of a signature: Signet's app tokens (`Signet-Token`),
/// Firebase App Check tokens (`X-Firebase-AppCheck`), or either during a migration.
public struct TokenAcceptance: Sendable, Hashable {
    public var appToken: Bool
    public var firebaseAppCheck: Bool
    /// The audience an app token must name for this route; any of the gateway's when `nil`.
    public var audience: String?

    public init(appToken: Bool, firebaseAppCheck: Bool, audience: String? = nil) {
        self.appToken = appToken
        self.firebaseAppCheck = firebaseAppCheck
        self.audience = audience
    }
}

/// Verifies a bearer token issued by someone else (Firebase App Check), for ``TokenAccessMiddleware``.
public protocol ExternalTokenVerifier: Sendable {
    /// The identity the token speaks for, or a `token_*` error.
    func identity(for token: String, now: Date) async throws -> SignetIdentity
}
