// SPDX-License-Identifier: Apache-2.0
import Foundation
import JWTKit
import SignetCore

/// The claims of a Client Attestation JWT (draft-ietf-oauth-attestation-based-client-auth-11 §4)
/// as Signet issues it: the OAuth client it speaks for (`sub`, the configured client id), when
/// (`iat`, `exp`), the client instance's key (`cnf.jwk`, RFC 7800 §3.2), and what Signet
/// established about the instance — the device, its key id, its trust level and platform.
///
/// jwt-kit signs and checks the signature; the claims are checked by
/// ``ClientAttestationVerifier`` against its own clock so each failure has its own reason code.
public struct ClientAttestationClaims: JWTPayload, Equatable {
    /// The confirmation claim (RFC 7800 §3.2): the instance key as a public JWK.
    public struct Confirmation: Codable, Sendable, Equatable {
        public var jwk: SignetCore.JWK

        public init(jwk: SignetCore.JWK) {
            self.jwk = jwk
        }
    }

    public var iss: String
    /// The OAuth client id.
    public var sub: String
    public var iat: Date
    public var exp: Date
    public var cnf: Confirmation
    /// The registered device the instance is.
    public var deviceID: String
    /// The device's key id, by which each use finds the device (and its revocation).
    public var keyID: String
    /// How the device proved itself (`app-attest`, `android-key-attestation`, `device-key`…).
    public var trustLevel: String
    /// `ios` or `android` for an attested device; absent otherwise.
    public var platform: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, iat, exp, cnf, platform
        case deviceID = "device_id"
        case keyID = "key_id"
        case trustLevel = "trust_level"
    }

    public init(
        iss: String,
        sub: String,
        iat: Date,
        exp: Date,
        cnf: Confirmation,
        deviceID: String,
        keyID: String,
        trustLevel: String,
        platform: String?
    ) {
        self.iss = iss
        self.sub = sub
        self.iat = iat
        self.exp = exp
        self.cnf = cnf
        self.deviceID = deviceID
        self.keyID = keyID
        self.trustLevel = trustLevel
        self.platform = platform
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        sub = try container.decode(String.self, forKey: .sub)
        iat = try container.decode(IssuedAtClaim.self, forKey: .iat).value
        exp = try container.decode(ExpirationClaim.self, forKey: .exp).value
        cnf = try container.decode(Confirmation.self, forKey: .cnf)
        deviceID = try container.decode(String.self, forKey: .deviceID)
        keyID = try container.decode(String.self, forKey: .keyID)
        trustLevel = try container.decode(String.self, forKey: .trustLevel)
        platform = try container.decodeIfPresent(String.self, forKey: .platform)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(sub, forKey: .sub)
        try container.encode(IssuedAtClaim(value: iat), forKey: .iat)
        try container.encode(ExpirationClaim(value: exp), forKey: .exp)
        try container.encode(cnf, forKey: .cnf)
        try container.encode(deviceID, forKey: .deviceID)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(trustLevel, forKey: .trustLevel)
        try container.encodeIfPresent(platform, forKey: .platform)
    }

    /// Nothing here: ``ClientAttestationVerifier`` checks the claims with its clock after jwt-kit
    /// checked the signature.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
