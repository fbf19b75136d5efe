// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    public struct Route: Codable, Sendable {
        /// A path prefix; the longest matching prefix wins.
        public var prefix: String
        /// Methods the rule covers; all when absent.
        public var methods: [String]?
        public var access: Access
        /// For `legacy-query-hmac`: the shared secret's key id.
        public var keyId: String?
        /// For `password` routes: offer and accept Digest with MD5 (also in `passwords.digestAlgorithms`).
        public var digestMD5: Bool?
        /// For `password` routes: accept only Digest `qop=auth-int`, which covers the body.
        public var requireAuthInt: Bool?
        /// For `password` routes: forward the client's `Authorization` upstream (removed by default).
        public var keepAuthorization: Bool?
        /// For `app-token` routes: the audience a token must name; any of `tokens.audience` when absent.
        public var audience: String?
        /// For routes that take App Check tokens: accept each token once (limited-use tokens,
        /// Firebase's replay protection), remembered in the store across instances.
        public var consumeAppCheckTokens: Bool?

        /// What a route asks of a request.
        public enum Access: String, Sendable, ConfigurationChoice {
            /// Passed through unverified.
            case open
            /// Any valid signature, whatever its key's trust level.
            case verified
            /// Mutual TLS with a certificate from the device CA.
            case clientCertificate = "client-certificate"
            /// The seeds' `msg` + `hmac` query scheme, under the route's `keyId`.
            case legacyQueryHMAC = "legacy-query-hmac"
            /// An encrypted body under the `legacyEnvelope` keys, forwarded decrypted.
            case legacyEnvelope = "legacy-envelope"
            /// A user's password: HTTP Digest, or Basic over TLS (`passwords`).
            case password
            /// A user's password, or a signed request of a registered device (device key or better).
            case passwordOrDevice = "password-or-device"
            /// A signature whose key has at least this trust level.
            case sharedSecret = "shared-secret"
            case deviceKey = "device-key"
            case appAttest = "app-attest"
            /// A Signet app token in `Signet-Token` (`tokens`).
            case appToken = "app-token"
            /// A Firebase App Check token in `X-Firebase-AppCheck` (`firebaseAppCheck`).
            case firebaseAppCheck = "firebase-app-check"
            /// Either, during a migration from Firebase App Check.
            case appTokenOrFirebase = "app-token-or-firebase-app-check"
        }

        public init(prefix: String, methods: [String]? = nil, access: Access, keyId: String? = nil) {
            self.prefix = prefix
            self.methods = methods
            self.access = access
            self.keyId = keyId
        }
    }
}

extension GatewayConfiguration.Route {
    var passwordOptions: PasswordRouteOptions {
        PasswordRouteOptions(
            allowMD5: digestMD5 ?? false,
            requireAuthInt: requireAuthInt ?? false,
            keepAuthorization: keepAuthorization ?? false
        )
    }

    func requirement() throws -> AccessRequirement {
        switch access {
        case .open: return .open
        case .verified: return .verified
        case .clientCertificate: return .clientCertificate
        case .legacyQueryHMAC:
            guard let keyId else {
                throw ConfigurationError.invalid("keyId", "keyId: a legacy-query-hmac route needs the shared secret's keyId")
            }
            return .legacyQueryHMAC(keyID: keyId)
        case .legacyEnvelope: return .legacyEnvelope
        case .password: return .password(passwordOptions)
        case .passwordOrDevice: return .passwordOrDevice(passwordOptions)
        case .sharedSecret: return .trustLevel(.sharedSecret)
        case .deviceKey: return .trustLevel(.deviceKey)
        case .appAttest: return .trustLevel(.appAttest)
        case .appToken: return .tokens(TokenAcceptance(appToken: true, firebaseAppCheck: false, audience: audience))
        case .firebaseAppCheck:
            return .tokens(TokenAcceptance(appToken: false, firebaseAppCheck: true, consumeFirebase: consumeAppCheckTokens ?? false))
        case .appTokenOrFirebase:
            return .tokens(
                TokenAcceptance(appToken: true, firebaseAppCheck: true, audience: audience, consumeFirebase: consumeAppCheckTokens ?? false)
            )
        }
    }
}
