// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// Mints app tokens for verified devices: ES256 JWTs under the ring's signing key.
public struct AppTokenIssuer: Sendable {
    /// The lifetimes a configuration may give: 5 minutes to 7 days.
    public static let lifetimes: ClosedRange<Int> = 300...604_800

    public let issuer: String
    public let audience: [String]
    public let lifetime: TimeInterval
    let keys: AppTokenKeys

    /// - Parameters:
    ///   - ring: The signing key and the published ones.
    ///   - issuer: The `iss` of every token.
    ///   - audience: The `aud` of every token: the backends meant to accept it.
    ///   - lifetimeSeconds: How long a token lives (``lifetimes``).
    public init(ring: AppTokenKeyRing, issuer: String, audience: [String], lifetimeSeconds: Int) throws {
        guard !issuer.isEmpty, !audience.isEmpty, !audience.contains(where: \.isEmpty) else {
            throw SignetError(.malformedMessage, "tokens: issuer and each audience are non-empty")
        }
        guard Self.lifetimes.contains(lifetimeSeconds) else {
            throw SignetError(.malformedMessage, "tokens.ttlSeconds is 300 to 604800, not \(lifetimeSeconds)")
        }
        self.issuer = issuer
        self.audience = audience
        self.lifetime = TimeInterval(lifetimeSeconds)
        self.keys = AppTokenKeys(ring: ring)
    }

    public var ring: AppTokenKeyRing { keys.ring }

    /// A token for `device`, bound to its key.
    ///
    /// - Parameters:
    ///   - deviceID: The device (`sub`).
    ///   - keyID: The device's key id, by which each use finds the device (and its revocation).
    ///   - trustLevel: How the device proved itself when it asked.
    ///   - deviceKey: The device's public key as a JWK, whose thumbprint is `cnf.jkt`.
    ///   - limitedUse: Whether the token works only once.
    ///   - dpopBound: Whether the token is DPoP-bound (taken only with a proof, never as a bearer token).
    ///   - now: The issue time (whole seconds in the token).
    public func issue(
        deviceID: String,
        keyID: String,
        trustLevel: TrustLevel,
        deviceKey: JWK,
        limitedUse: Bool,
        dpopBound: Bool = false,
        now: Date
    ) async throws -> (token: String, claims: AppTokenClaims) {
        let issued = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let claims = AppTokenClaims(
            iss: issuer,
            sub: deviceID,
            aud: audience,
            iat: issued,
            exp: issued.addingTimeInterval(lifetime),
            jti: Base64.urlEncode((0..<16).map { _ in UInt8.random(in: .min ... .max) }),
            trustLevel: trustLevel.rawValue,
            keyID: keyID,
            cnf: .init(jkt: try deviceKey.thumbprint),
            limitedUse: limitedUse ? true : nil,
            dpop: dpopBound ? true : nil
        )
        return (try await keys.sign(claims), claims)
    }
}
