// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// One rule of the route table. In JSON it is flat — `{"prefix": "/login", "access":
    /// "password", "requireAuthInt": true}` — and an option is refused on a route whose access mode
    /// it does not belong to, so a misplaced one never silently does nothing.
    public struct Route: Sendable {
        /// A path prefix; the longest matching prefix wins.
        public var prefix: String
        /// Methods the rule covers; all when absent.
        public var methods: [String]?
        /// What the route asks of a request, with the options of that mode.
        public var access: Access

        public init(prefix: String, methods: [String]? = nil, access: Access) {
            self.prefix = prefix
            self.methods = methods
            self.access = access
        }

        /// What a route asks of a request.
        public enum Access: Sendable, Hashable {
            /// Passed through unverified.
            case open
            /// Any valid signature, whatever its key's trust level.
            case verified
            /// Mutual TLS with a certificate from the device CA.
            case clientCertificate
            /// The seeds' `msg` + `hmac` query scheme, under the shared secret `keyId`.
            case legacyQueryHMAC(keyId: String)
            /// An encrypted body under the `legacyEnvelope` keys, forwarded decrypted.
            case legacyEnvelope
            /// A user's password: HTTP Digest, or Basic over TLS (`passwords`).
            case password(PasswordRouteOptions)
            /// A user's password, or a signed request of a registered device (device key or better).
            case passwordOrDevice(PasswordRouteOptions)
            /// A signature whose key has at least this trust level; `appAttest` and
            /// `androidKeyAttestation` ask for that platform's attestation, `attested` for either.
            case sharedSecret, deviceKey, appAttest, androidKeyAttestation, attested
            /// A signature by any registered key and a Play Integrity token bound to it
            /// (`androidAttestation.playIntegrity`).
            case playIntegrity
            /// A Signet app token in `Signet-Token` (`tokens`), for `audience` (any of
            /// `tokens.audience` when `nil`).
            case appToken(audience: String?)
            /// A Firebase App Check token in `X-Firebase-AppCheck` (`firebaseAppCheck`); each
            /// accepted once when `consumeTokens` (Firebase's replay protection, across instances).
            case firebaseAppCheck(consumeTokens: Bool)
            /// Either, during a migration from Firebase App Check.
            case appTokenOrFirebase(audience: String?, consumeTokens: Bool)

            /// The modes with their options at their defaults.
            public static var password: Access { .password(PasswordRouteOptions()) }
            public static var passwordOrDevice: Access { .passwordOrDevice(PasswordRouteOptions()) }
            public static var appToken: Access { .appToken(audience: nil) }
            public static var firebaseAppCheck: Access { .firebaseAppCheck(consumeTokens: false) }
            public static var appTokenOrFirebase: Access { .appTokenOrFirebase(audience: nil, consumeTokens: false) }

            /// The mode's name, as the configuration spells it.
            public var mode: Mode {
                switch self {
                case .open: .open
                case .verified: .verified
                case .clientCertificate: .clientCertificate
                case .legacyQueryHMAC: .legacyQueryHMAC
                case .legacyEnvelope: .legacyEnvelope
                case .password: .password
                case .passwordOrDevice: .passwordOrDevice
                case .sharedSecret: .sharedSecret
                case .deviceKey: .deviceKey
                case .appAttest: .appAttest
                case .androidKeyAttestation: .androidKeyAttestation
                case .attested: .attested
                case .playIntegrity: .playIntegrity
                case .appToken: .appToken
                case .firebaseAppCheck: .firebaseAppCheck
                case .appTokenOrFirebase: .appTokenOrFirebase
                }
            }

            /// The access modes by name.
            public enum Mode: String, Sendable, ConfigurationChoice {
                case open
                case verified
                case clientCertificate = "client-certificate"
                case legacyQueryHMAC = "legacy-query-hmac"
                case legacyEnvelope = "legacy-envelope"
                case password
                case passwordOrDevice = "password-or-device"
                case sharedSecret = "shared-secret"
                case deviceKey = "device-key"
                case appAttest = "app-attest"
                case androidKeyAttestation = "android-key-attestation"
                /// An attested device of either platform (App Attest or Android Key Attestation).
                case attested
                /// A signed request with a Play Integrity token bound to its signature.
                case playIntegrity = "play-integrity"
                case appToken = "app-token"
                case firebaseAppCheck = "firebase-app-check"
                case appTokenOrFirebase = "app-token-or-firebase-app-check"
            }

            /// The password options, on password routes.
            var passwordOptions: PasswordRouteOptions? {
                switch self {
                case .password(let options), .passwordOrDevice(let options): options
                default: nil
                }
            }

            /// The audience an app token must name, on app-token routes.
            var audience: String? {
                switch self {
                case .appToken(let audience), .appTokenOrFirebase(let audience, _): audience
                default: nil
                }
            }

            /// Whether the route takes Firebase App Check tokens.
            var takesAppCheck: Bool { mode == .firebaseAppCheck || mode == .appTokenOrFirebase }
        }
    }
}

extension GatewayConfiguration.Route {
    func requirement() -> AccessRequirement {
        switch access {
        case .open: .open
        case .verified: .verified
        case .clientCertificate: .clientCertificate
        case .legacyQueryHMAC(let keyId): .legacyQueryHMAC(keyID: keyId)
        case .legacyEnvelope: .legacyEnvelope
        case .password(let options): .password(options)
        case .passwordOrDevice(let options): .passwordOrDevice(options)
        case .sharedSecret: .trustLevel(.sharedSecret)
        case .deviceKey: .trustLevel(.deviceKey)
        case .appAttest: .trustLevel(.appAttest)
        case .androidKeyAttestation: .trustLevel(.androidKeyAttestation)
        case .attested: .trustLevel(.attested)
        case .playIntegrity: .playIntegrity
        case .appToken(let audience): .tokens(TokenAcceptance(appToken: true, firebaseAppCheck: false, audience: audience))
        case .firebaseAppCheck(let consume):
            .tokens(TokenAcceptance(appToken: false, firebaseAppCheck: true, consumeFirebase: consume))
        case .appTokenOrFirebase(let audience, let consume):
            .tokens(TokenAcceptance(appToken: true, firebaseAppCheck: true, audience: audience, consumeFirebase: consume))
        }
    }

    /// `keyId=…`, `audience=…` and the switches that are on, as the route table prints them.
    var optionsText: String {
        var text: [String] = []
        if case .legacyQueryHMAC(let keyId) = access { text.append("keyId=\(keyId)") }
        if let audience = access.audience { text.append("audience=\(audience)") }
        if let options = access.passwordOptions {
            if options.allowMD5 { text.append("digestMD5") }
            if options.requireAuthInt { text.append("requireAuthInt") }
            if options.keepAuthorization { text.append("keepAuthorization") }
        }
        switch access {
        case .firebaseAppCheck(true), .appTokenOrFirebase(_, true): text.append("consumeAppCheckTokens")
        default: break
        }
        return text.joined(separator: " ")
    }
}

extension GatewayConfiguration.Route: Codable {
    private enum CodingKeys: String, CodingKey {
        case prefix, methods, access, keyId, digestMD5, requireAuthInt, keepAuthorization, audience, consumeAppCheckTokens
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        prefix = try container.decode(String.self, forKey: .prefix)
        methods = try container.decodeIfPresent([String].self, forKey: .methods)
        let mode = try container.decode(Access.Mode.self, forKey: .access)
        let at = GatewayConfiguration.path(decoder.codingPath)
        // An option given on a route of another mode is refused, not ignored.
        func refuse(_ keys: [CodingKeys], unless allowed: Bool, _ what: String) throws {
            guard !allowed else { return }
            let given = try keys.filter { try container.contains($0) && !container.decodeNil(forKey: $0) }
            guard let first = given.first else { return }
            let names = keys.map(\.rawValue)
            let path = keys.count == 1 ? "\(at).\(first.rawValue)" : at
            let subject =
                keys.count == 1 ? "\(at).\(first.rawValue) is" : "\(at): \(names.dropLast().joined(separator: ", ")) and \(names.last!) are"
            throw ConfigurationError.invalid(path, "\(subject) for \(what)")
        }
        let isPassword = mode == .password || mode == .passwordOrDevice
        try refuse([.digestMD5, .requireAuthInt, .keepAuthorization], unless: isPassword, "password routes")
        try refuse([.audience], unless: mode == .appToken || mode == .appTokenOrFirebase, "app-token routes")
        try refuse([.consumeAppCheckTokens], unless: mode == .firebaseAppCheck || mode == .appTokenOrFirebase, "routes that take App Check tokens")
        try refuse([.keyId], unless: mode == .legacyQueryHMAC, "legacy-query-hmac routes")
        func flag(_ key: CodingKeys) throws -> Bool { try container.decodeIfPresent(Bool.self, forKey: key) ?? false }
        let audience = try container.decodeIfPresent(String.self, forKey: .audience)
        let consume = try flag(.consumeAppCheckTokens)
        switch mode {
        case .open: access = .open
        case .verified: access = .verified
        case .clientCertificate: access = .clientCertificate
        case .legacyQueryHMAC:
            guard let keyId = try container.decodeIfPresent(String.self, forKey: .keyId) else {
                throw ConfigurationError.invalid("\(at).keyId", "\(at).keyId: a legacy-query-hmac route needs the shared secret's keyId")
            }
            access = .legacyQueryHMAC(keyId: keyId)
        case .legacyEnvelope: access = .legacyEnvelope
        case .password, .passwordOrDevice:
            let options = PasswordRouteOptions(
                allowMD5: try flag(.digestMD5),
                requireAuthInt: try flag(.requireAuthInt),
                keepAuthorization: try flag(.keepAuthorization)
            )
            access = mode == .password ? .password(options) : .passwordOrDevice(options)
        case .sharedSecret: access = .sharedSecret
        case .deviceKey: access = .deviceKey
        case .appAttest: access = .appAttest
        case .androidKeyAttestation: access = .androidKeyAttestation
        case .attested: access = .attested
        case .playIntegrity: access = .playIntegrity
        case .appToken: access = .appToken(audience: audience)
        case .firebaseAppCheck: access = .firebaseAppCheck(consumeTokens: consume)
        case .appTokenOrFirebase: access = .appTokenOrFirebase(audience: audience, consumeTokens: consume)
        }
    }

    /// Flat again, with every option of the route's mode (the configuration check reads which keys
    /// a document used from this encoding).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(prefix, forKey: .prefix)
        try container.encodeIfPresent(methods, forKey: .methods)
        try container.encode(access.mode, forKey: .access)
        if case .legacyQueryHMAC(let keyId) = access { try container.encode(keyId, forKey: .keyId) }
        if let options = access.passwordOptions {
            try container.encode(options.allowMD5, forKey: .digestMD5)
            try container.encode(options.requireAuthInt, forKey: .requireAuthInt)
            try container.encode(options.keepAuthorization, forKey: .keepAuthorization)
        }
        switch access {
        case .appToken(let audience):
            try container.encode(audience, forKey: .audience)
        case .firebaseAppCheck(let consume):
            try container.encode(consume, forKey: .consumeAppCheckTokens)
        case .appTokenOrFirebase(let audience, let consume):
            try container.encode(audience, forKey: .audience)
            try container.encode(consume, forKey: .consumeAppCheckTokens)
        default:
            break
        }
    }
}
