// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Which bearer tokens a route takes in place of a signature: Signet's app tokens (`Signet-Token`),
/// Firebase App Check tokens (`X-Firebase-AppCheck`), or either during a migration.
public struct TokenAcceptance: Sendable, Hashable {
    public var appToken: Bool
    public var firebaseAppCheck: Bool
    /// The audience an app token must name for this route; any of the gateway's when `nil`.
    public var audience: String?
    /// Each App Check token is accepted once on this route: Firebase's replay protection for
    /// limited-use tokens, kept in the gateway's store (shared by its instances) rather than at Google.
    public var consumeFirebase: Bool
    /// App tokens are taken only with a DPoP proof of the key they are bound to (RFC 9449), from
    /// `Authorization: DPoP` or `Signet-Token`; `nil`: as bearer tokens.
    public var dpop: DPoPRequirement?

    public init(
        appToken: Bool,
        firebaseAppCheck: Bool,
        audience: String? = nil,
        consumeFirebase: Bool = false,
        dpop: DPoPRequirement? = nil
    ) {
        self.appToken = appToken
        self.firebaseAppCheck = firebaseAppCheck
        self.audience = audience
        self.consumeFirebase = consumeFirebase
        self.dpop = dpop
    }
}

/// Verifies a bearer token issued by someone else (Firebase App Check), for ``TokenAccessMiddleware``.
public protocol ExternalTokenVerifier: Sendable {
    /// The identity the token speaks for, or a `token_*` error.
    ///
    /// - Parameters:
    ///   - token: The token as the request carried it.
    ///   - now: The time it is checked at.
    ///   - consume: Accept this token only once: `token_replayed` every later time.
    func identity(for token: String, now: Date, consume: Bool) async throws -> SignetIdentity
}
