// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Checks a Signet app token on use: signature under a published key, issuer,
/// expiry, audience, the device still registered and active (through the same key cache as
/// signatures, so a revocation applies within the cache's lifetime on every instance), the risk
/// limit, and — for a limited-use token — its `jti` claimed once in the store, across instances,
/// only after everything else passed. A DPoP-bound token (`dpop: true`) is refused without a
/// proof of its key (RFC 9449 §7.2).
public struct AppTokenVerifier: Sendable {
    public let issuer: String
    /// The audiences this gateway serves: a token must name one of them (or the route's own).
    public let audience: [String]
    let keys: AppTokenKeys
    let devices: any KeyResolver
    let nonces: any NonceStore
    let riskLimit: RiskLimit?
    let clockSkew: TimeInterval

    /// The nonce-store namespace of limited-use token ids (no key id starts with `:`).
    static let claimNamespace = ":app-token"

    /// - Parameters:
    ///   - issuer: The tokens' issuer (the same ``AppTokenIssuer``'s).
    ///   - devices: Resolves a token's `key_id` to the device, as for signatures.
    ///   - nonces: Where limited-use token ids are claimed.
    ///   - riskLimit: The App Attest risk limit, as for signatures.
    ///   - clockSkew: Seconds an `exp` or `iat` may be off.
    public init(
        issuer: AppTokenIssuer,
        devices: any KeyResolver,
        nonces: any NonceStore,
        riskLimit: RiskLimit? = nil,
        clockSkew: TimeInterval = 30
    ) {
        self.issuer = issuer.issuer
        self.audience = issuer.audience
        self.keys = issuer.keys
        self.devices = devices
        self.nonces = nonces
        self.riskLimit = riskLimit
        self.clockSkew = clockSkew
    }

    /// The identity a token speaks for, or the reason it does not.
    ///
    /// - Parameters:
    ///   - token: The compact JWS from `Signet-Token` or `Authorization: DPoP`.
    ///   - audience: The audience the route asks for; any of the gateway's when `nil`.
    ///   - now: The time of the request.
    ///   - possession: Checks that the client holds the key the token is bound to (a DPoP proof
    ///     against `cnf.jkt`), after every check of the token and before its `jti` is claimed.
    ///     Without it the token is taken as a bearer token, which a DPoP-bound one never is
    ///     (RFC 9449 §7.2).
    public func identity(
        for token: String,
        audience: String?,
        now: Date,
        possession: ((AppTokenClaims) async throws -> Void)? = nil
    ) async throws -> SignetIdentity {
        let claims = try await keys.verify(token, now: now)
        guard possession != nil || claims.dpop != true else {
            throw SignetError(.tokenInvalid, "the token is DPoP-bound: send it as Authorization: DPoP with a proof, on a dpop route")
        }
        guard claims.iss == issuer else {
            throw SignetError(.tokenInvalid, "the token was issued by \(claims.iss.debugDescription)")
        }
        guard now.timeIntervalSince(claims.exp) <= clockSkew else {
            throw SignetError(.tokenExpired, "the token expired at \(JSONResponse.rfc3339(claims.exp))")
        }
        guard claims.iat.timeIntervalSince(now) <= clockSkew, claims.jti.utf8.count <= 128 else {
            throw SignetError(.tokenInvalid, "the token is issued in the future or has an oversized jti")
        }
        let accepted = audience.map { [$0] } ?? self.audience
        guard claims.aud.contains(where: accepted.contains) else {
            throw SignetError(.tokenAudienceMismatch, "the token is not meant for \(accepted.joined(separator: ", "))")
        }
        guard let trustLevel = TrustLevel(rawValue: claims.trustLevel) else {
            throw SignetError(.tokenInvalid, "the token's trust level is unknown")
        }
        let records = try await devices.records(for: claims.keyID)
        guard let record = records.first(where: { $0.owner?.deviceID == claims.sub }) else {
            throw SignetError(.keyRevoked, "the token's device is no longer registered")
        }
        guard !record.revoked else {
            throw SignetError(.keyRevoked, "the token's device is revoked")
        }
        try riskLimit?.check(record.owner)
        try await possession?(claims)
        if claims.limitedUse == true {
            let claimed = try await nonces.claim(
                keyID: Self.claimNamespace,
                nonce: claims.jti,
                until: claims.exp.addingTimeInterval(clockSkew),
                now: now
            )
            guard claimed else { throw SignetError(.tokenReplayed, "this limited-use token was used before") }
        }
        var identity = SignetIdentity(
            deviceID: claims.sub,
            keyID: claims.keyID,
            trustLevel: trustLevel,
            algorithm: "app-token",
            nonce: claims.jti,
            created: claims.iat,
            user: record.owner?.user
        )
        identity.riskMetric = record.owner?.riskMetric
        identity.integrityFlags = record.owner?.integrityFlags ?? []
        return identity
    }
}
