// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// App tokens: short-lived ES256 JWTs the gateway gives verified devices (`POST
    /// /signet/v1/tokens`), accepted on `app-token` routes and checkable by any backend with the
    /// JWKS (`GET /signet/v1/jwks`); off when absent.
    ///
    /// Rotation: the next key is published ahead (`nextKeyFile`); at the rotation it becomes
    /// `keyFile`, the old one moves to `retiredKeys` with the time of the change, and stays
    /// published and accepted until the last token it signed has expired (`retiredAt` + `ttlSeconds`).
    public struct Tokens: Codable, Sendable, Equatable {
        /// A key signing no more.
        public struct RetiredKey: Codable, Sendable, Equatable {
            public var keyFile: String
            /// When it stopped signing.
            public var retiredAt: Date

            public init(keyFile: String, retiredAt: Date) {
                self.keyFile = keyFile
                self.retiredAt = retiredAt
            }
        }

        /// Who asks for a token: a signature of at least this trust level, or a client certificate.
        public enum Issuance: String, Sendable, ConfigurationChoice {
            case deviceKey = "device-key"
            case appAttest = "app-attest"
            case androidKeyAttestation = "android-key-attestation"
            /// Devices attested by either platform.
            case attested
            case clientCertificate = "client-certificate"

            /// The level a signature must meet to be issued to; `nil` for a client certificate.
            var minimumTrustLevel: TrustLevel? {
                switch self {
                case .deviceKey: .deviceKey
                case .appAttest: .appAttest
                case .androidKeyAttestation: .androidKeyAttestation
                case .attested: .attested
                case .clientCertificate: nil
                }
            }
        }

        /// The `iss` of every token.
        public var issuer: String
        /// The `aud` of every token; `app-token` routes accept any of them unless they name one.
        public var audience: [String]
        /// 300 (5 minutes) to 604800 (7 days); 3600 when absent.
        public var ttlSeconds: Int?
        /// The signing key (PEM, P-256), created on first start when the file does not exist.
        public var keyFile: String
        /// The next signing key, published ahead; created on first start when absent.
        public var nextKeyFile: String?
        /// Earlier signing keys, published until their last token expires.
        public var retiredKeys: [RetiredKey]?
        /// What `POST /signet/v1/tokens` asks of a device; `device-key` when absent.
        public var issueTo: Issuance?
        /// How old a DPoP proof may be on `dpop` routes, 5 to 300 seconds; 60 when absent. The
        /// policy's clock skew is allowed on top of it.
        public var dpopProofLifetime: Int?
        static let defaultDPoPProofLifetime = 60
        /// `issueTo` in force: a device key (or better) when absent.
        var issuance: Issuance { issueTo ?? .deviceKey }

        var lifetime: Int { ttlSeconds ?? 3600 }

        public init(issuer: String, audience: [String], keyFile: String) {
            self.issuer = issuer
            self.audience = audience
            self.keyFile = keyFile
        }
    }

    /// Firebase App Check tokens on `firebase-app-check` routes: RS256 JWTs from Google, checked
    /// against the JWKS at `jwksUrl` (cached as its `Cache-Control` says, at most six hours, as
    /// Firebase requires).
    public struct FirebaseAppCheck: Codable, Sendable, Equatable {
        /// The Firebase project number (digits): the issuer is
        /// `https://firebaseappcheck.googleapis.com/<number>`, the audience `projects/<number>`.
        public var projectNumber: String
        /// Accepted Firebase app ids (`sub`); any of the project's when absent.
        public var appIds: [String]?
        /// Where the keys are; Google's when absent (a local server in tests).
        public var jwksUrl: String?

        public init(projectNumber: String, appIds: [String]? = nil, jwksUrl: String? = nil) {
            self.projectNumber = projectNumber
            self.appIds = appIds
            self.jwksUrl = jwksUrl
        }
    }
}

extension GatewayConfiguration {
    func validateTokens() throws {
        if let tokens {
            guard !tokens.issuer.isEmpty, !tokens.audience.isEmpty, !tokens.audience.contains(where: \.isEmpty) else {
                throw ConfigurationError.invalid("tokens", "tokens: give an issuer and at least one audience, none empty")
            }
            guard AppTokenIssuer.lifetimes.contains(tokens.lifetime) else {
                throw ConfigurationError.invalid("tokens.ttlSeconds", "tokens.ttlSeconds is 300 to 604800, not \(tokens.lifetime)")
            }
            if let lifetime = tokens.dpopProofLifetime, !(5...300).contains(lifetime) {
                throw ConfigurationError.invalid("tokens.dpopProofLifetime", "tokens.dpopProofLifetime is 5 to 300 seconds, not \(lifetime)")
            }
            if tokens.issueTo == .clientCertificate, tls?.clientCertificates != true || deviceCA == nil {
                throw ConfigurationError.invalid("tokens.issueTo", "tokens.issueTo client-certificate needs tls.clientCertificates and deviceCA")
            }
        }
        if let firebase = firebaseAppCheck {
            guard !firebase.projectNumber.isEmpty, firebase.projectNumber.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw ConfigurationError.invalid("firebaseAppCheck.projectNumber", "firebaseAppCheck.projectNumber is the project's number (digits)")
            }
            if let url = firebase.jwksUrl {
                try Self.checkHTTPS(url, name: "firebaseAppCheck.jwksUrl")
            }
        }
    }

    /// An app-token route needs `tokens`, and its `audience` among theirs; one that takes App
    /// Check tokens needs `firebaseAppCheck`.
    static func checkTokenRoute(_ route: Route, _ configuration: GatewayConfiguration, at: String) throws {
        let acceptance = TokensFeature.acceptance(route.access)
        if acceptance.appToken {
            guard let tokens = configuration.tokens else {
                throw ConfigurationError.invalid("\(at).access", "\(at).access: \(route.access.mode) routes need tokens")
            }
            if let audience = acceptance.audience, !tokens.audience.contains(audience) {
                throw ConfigurationError.invalid("\(at).audience", "\(at).audience: \(audience.debugDescription) is not in tokens.audience")
            }
        }
        if acceptance.firebaseAppCheck, configuration.firebaseAppCheck == nil {
            throw ConfigurationError.invalid("\(at).access", "\(at).access: \(route.access.mode) routes need firebaseAppCheck")
        }
    }
}
