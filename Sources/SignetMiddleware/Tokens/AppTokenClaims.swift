// SPDX-License-Identifier: Apache-2.0
import Foundation
import JWTKit

/// The claims of a Signet app token: who (`sub`, the device), for whom (`aud`), when (`iat`,
/// `exp`), which token (`jti`), how the device proved itself (`trust_level`, `key_id`) and the key
/// it holds (`cnf.jkt`, RFC 7800 with an RFC 7638 thumbprint) so a backend can bind the token to a
/// proof of possession.
///
/// jwt-kit signs and checks the signature; the claims are checked by ``AppTokenVerifier`` against
/// its own clock so each failure has its own reason code.
public struct AppTokenClaims: JWTPayload, Equatable {
    /// The confirmation claim (RFC 7800 §3.1): the device key's JWK thumbprint.
    public struct Confirmation: Codable, Sendable, Equatable {
        public var jkt: String

        public init(jkt: String) {
            self.jkt = jkt
        }
    }

    public var iss: String
    public var sub: String
    /// Always written as a JSON array; read as an array or a single string (RFC 7519 §4.1.3).
    public var aud: [String]
    public var iat: Date
    public var exp: Date
    public var jti: String
    public var trustLevel: String
    public var keyID: String
    public var cnf: Confirmation
    /// A token that works once (claimed by `jti` on first use).
    public var limitedUse: Bool?
    /// A DPoP-bound token (RFC 9449 §5): taken only with a proof of the `cnf.jkt` key, never as a
    /// bearer token.
    public var dpop: Bool?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, iat, exp, jti, cnf
        case trustLevel = "trust_level"
        case keyID = "key_id"
        case limitedUse = "limited_use"
        case dpop
    }

    public init(
        iss: String,
        sub: String,
        aud: [String],
        iat: Date,
        exp: Date,
        jti: String,
        trustLevel: String,
        keyID: String,
        cnf: Confirmation,
        limitedUse: Bool? = nil,
        dpop: Bool? = nil
    ) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.iat = iat
        self.exp = exp
        self.jti = jti
        self.trustLevel = trustLevel
        self.keyID = keyID
        self.cnf = cnf
        self.limitedUse = limitedUse
        self.dpop = dpop
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        sub = try container.decode(String.self, forKey: .sub)
        aud = try container.decode(AudienceClaim.self, forKey: .aud).value
        iat = try container.decode(IssuedAtClaim.self, forKey: .iat).value
        exp = try container.decode(ExpirationClaim.self, forKey: .exp).value
        jti = try container.decode(String.self, forKey: .jti)
        trustLevel = try container.decode(String.self, forKey: .trustLevel)
        keyID = try container.decode(String.self, forKey: .keyID)
        cnf = try container.decode(Confirmation.self, forKey: .cnf)
        limitedUse = try container.decodeIfPresent(Bool.self, forKey: .limitedUse)
        dpop = try container.decodeIfPresent(Bool.self, forKey: .dpop)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(sub, forKey: .sub)
        try container.encode(aud, forKey: .aud)
        try container.encode(IssuedAtClaim(value: iat), forKey: .iat)
        try container.encode(ExpirationClaim(value: exp), forKey: .exp)
        try container.encode(jti, forKey: .jti)
        try container.encode(trustLevel, forKey: .trustLevel)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(cnf, forKey: .cnf)
        try container.encodeIfPresent(limitedUse, forKey: .limitedUse)
        try container.encodeIfPresent(dpop, forKey: .dpop)
    }

    /// Nothing here: ``AppTokenVerifier`` checks the claims with its clock after jwt-kit checked
    /// the signature.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
