// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetMiddleware

extension GatewayConfiguration {
    /// OAuth 2.0 Attestation-Based Client Authentication (draft-ietf-oauth-attestation-based-client-auth-11):
    /// the gateway issues Client Attestation JWTs to verified devices
    /// (`POST /signet/v1/client-attestations`) under the app tokens' key ring (`tokens` is needed),
    /// and checks them with their PoPs on `client-attestation` routes; off when absent.
    public struct ClientAttestation: Codable, Sendable, Equatable {
        /// The OAuth client id of the app: every attestation's `sub`.
        public var clientId: String
        /// The identifier each PoP's `aud` must be on routes that name none: this server's resource
        /// URL (RFC 9728), or the issuer of the authorization server behind it (RFC 8414).
        public var audience: String
        /// 300 (5 minutes) to 86400 (1 day), and at most `tokens.ttlSeconds`; 3600 when absent.
        public var ttlSeconds: Int?
        /// What `POST /signet/v1/client-attestations` asks of a device; `device-key` when absent.
        /// (`client-certificate` is not offered: a PoP is signed by a key the app holds, which a
        /// certificate's key in the TLS stack is not.)
        public var issueTo: Tokens.Issuance?
        /// How old a PoP may be, 5 to 300 seconds; 60 when absent. The policy's clock skew is
        /// allowed on top of it.
        public var popLifetime: Int?
        /// How long a server challenge is taken, 30 to 3600 seconds; 300 when absent.
        public var challengeLifetime: Int?

        var lifetime: Int { ttlSeconds ?? 3600 }
        var issuance: Tokens.Issuance { issueTo ?? .deviceKey }

        public init(clientId: String, audience: String) {
            self.clientId = clientId
            self.audience = audience
        }
    }

    func validateClientAttestation() throws {
        guard let attestation = clientAttestation else { return }
        guard let tokens else {
            throw ConfigurationError.invalid("clientAttestation", "clientAttestation needs tokens: attestations are signed with the token keys")
        }
        guard !attestation.clientId.isEmpty, attestation.clientId.utf8.count <= 256 else {
            throw ConfigurationError.invalid("clientAttestation.clientId", "clientAttestation.clientId is 1 to 256 bytes")
        }
        guard !attestation.audience.isEmpty else {
            throw ConfigurationError.invalid("clientAttestation.audience", "clientAttestation.audience is this server's identifier, not empty")
        }
        let consent = ClientAttestationIssuer.consentAudience(issuer: tokens.issuer)
        guard attestation.audience != consent else {
            throw ConfigurationError.invalid("clientAttestation.audience", "clientAttestation.audience is not \(consent), the audience of a device's consent to attest a key")
        }
        guard ClientAttestationIssuer.lifetimes.contains(attestation.lifetime) else {
            throw ConfigurationError.invalid("clientAttestation.ttlSeconds", "clientAttestation.ttlSeconds is 300 to 86400, not \(attestation.lifetime)")
        }
        // A retired token key is published for tokens.ttlSeconds after its retirement: an attestation
        // that outlived it would stop verifying early.
        guard attestation.lifetime <= tokens.lifetime else {
            throw ConfigurationError.invalid("clientAttestation.ttlSeconds", "clientAttestation.ttlSeconds (\(attestation.lifetime)) is at most tokens.ttlSeconds (\(tokens.lifetime)), how long a retired token key stays published")
        }
        if let lifetime = attestation.popLifetime, !(5...300).contains(lifetime) {
            throw ConfigurationError.invalid("clientAttestation.popLifetime", "clientAttestation.popLifetime is 5 to 300 seconds, not \(lifetime)")
        }
        if let lifetime = attestation.challengeLifetime, !(30...3600).contains(lifetime) {
            throw ConfigurationError.invalid("clientAttestation.challengeLifetime", "clientAttestation.challengeLifetime is 30 to 3600 seconds, not \(lifetime)")
        }
        if attestation.issueTo == .clientCertificate {
            throw ConfigurationError.invalid("clientAttestation.issueTo", "clientAttestation.issueTo is device-key, app-attest, android-key-attestation or attested")
        }
    }
}
