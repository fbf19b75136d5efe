// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Makes the gateway a Client Attester (draft-ietf-oauth-attestation-based-client-auth-11): it
/// issues Client Attestation JWTs, `typ` `oauth-client-attestation+jwt`, to devices it verified,
/// under the app tokens' key ring (so the same JWKS checks both), each bound to the instance's key.
public struct ClientAttestationIssuer: Sendable {
    /// The lifetimes a configuration may give: 5 minutes to 1 day. An attestation is reused for
    /// many requests with fresh proofs (§10.2), so its lifetime is how long a revoked device's
    /// attestation still reads as valid to a server that checks only the JWT.
    public static let lifetimes: ClosedRange<Int> = 300...86_400
    /// The `typ` of every attestation (§4).
    public static let type = "oauth-client-attestation+jwt"

    /// The `iss` of every attestation: the app tokens' issuer.
    public let issuer: String
    /// The `sub` of every attestation: the OAuth client id of the app.
    public let clientID: String
    public let lifetime: TimeInterval
    let keys: AppTokenKeys

    /// - Parameters:
    ///   - tokens: The app token issuer, whose key ring and issuer name attestations share.
    ///   - clientID: The OAuth client id the attestations speak for.
    ///   - lifetimeSeconds: How long an attestation lives (``lifetimes``).
    public init(tokens: AppTokenIssuer, clientID: String, lifetimeSeconds: Int) throws {
        guard !clientID.isEmpty, clientID.utf8.count <= 256 else {
            throw SignetError(.malformedMessage, "clientAttestation.clientId is 1 to 256 bytes")
        }
        guard Self.lifetimes.contains(lifetimeSeconds) else {
            throw SignetError(.malformedMessage, "clientAttestation.ttlSeconds is 300 to 86400, not \(lifetimeSeconds)")
        }
        self.issuer = tokens.issuer
        self.clientID = clientID
        self.lifetime = TimeInterval(lifetimeSeconds)
        self.keys = tokens.keys
    }

    /// An attestation that the instance holding `instanceKey` is the device `deviceID`.
    ///
    /// - Parameters:
    ///   - deviceID: The verified device.
    ///   - keyID: The device's key id, by which each use finds the device and its revocation.
    ///   - trustLevel: How the device proved itself when it asked.
    ///   - instanceKey: The public key the instance signs its proofs with (`cnf.jwk`).
    ///   - now: The issue time (whole seconds in the attestation).
    public func issue(
        deviceID: String,
        keyID: String,
        trustLevel: TrustLevel,
        instanceKey: JWK,
        now: Date
    ) async throws -> (attestation: String, claims: ClientAttestationClaims) {
        let issued = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let claims = ClientAttestationClaims(
            iss: issuer,
            sub: clientID,
            iat: issued,
            exp: issued.addingTimeInterval(lifetime),
            cnf: .init(jwk: instanceKey.publicJWK),
            deviceID: deviceID,
            keyID: keyID,
            trustLevel: trustLevel.rawValue,
            platform: Self.platform(of: trustLevel)
        )
        return (try await keys.sign(claims, typ: Self.type), claims)
    }

    /// What a PoP by a key a device names for attestation has as `aud`: the issuing endpoint under
    /// the attester's name. No route's audience may be it, so a PoP meant for a route, refused there
    /// before it was claimed, never serves as consent to attest that key for another device.
    public var consentAudience: String { Self.consentAudience(issuer: issuer) }

    /// ``consentAudience`` for the attester `issuer`.
    public static func consentAudience(issuer: String) -> String { ClientAttestationPoP.consentAudience(issuer: issuer) }

    static func platform(of trustLevel: TrustLevel) -> String? {
        switch trustLevel {
        case .appAttest: "ios"
        case .androidKeyAttestation: "android"
        default: nil
        }
    }
}
