// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// One rule of the route table. In JSON it is flat — `{"prefix": "/login", "access":
    /// "password", "requireAuthInt": true}` — and an option is refused on a route whose access mode
    /// does not take it, so a misplaced one never silently does nothing.
    public struct Route: Sendable, Equatable {
        /// A path prefix; the longest matching prefix wins.
        public var prefix: String
        /// Methods the rule covers; all when absent.
        public var methods: [String]?
        /// What the route asks of a request, with the options of that mode.
        public var access: Access
        /// Whether a request the route's access refuses is refused (`enforce`) or forwarded with
        /// the verdict (`monitor`).
        public var mode: Mode

        public init(prefix: String, methods: [String]? = nil, access: Access, mode: Mode = .enforce) {
            self.prefix = prefix
            self.methods = methods
            self.access = access
            self.mode = mode
        }

        /// What a route does with a request its access refuses.
        public enum Mode: String, Sendable, Codable, CaseIterable {
            /// Refused with its reason code (the default).
            case enforce
            /// Verified exactly as `enforce` would — nonces, counters and tokens claimed — then
            /// forwarded whatever the verdict, with `Signet-Verdict` (`accepted` or the reason code)
            /// for the upstream, and counted as a would-be refusal: a route's refusals seen before
            /// anything is refused. Refusals that protect the gateway itself (a path it cannot route
            /// exactly, a body too large or too slow, a client past its limits, a store it cannot
            /// reach) are made in either mode; no request is refused from its head, so any client's
            /// body is read (within `maxBodyBytes`) and forwarded, as on an `open` route.
            case monitor
        }

        /// What a route asks of a request: an access mode by name, and the route's options for it.
        ///
        /// Each mode belongs to the feature that registers it (the gateway's access-mode registry,
        /// docs/decisions.md): the feature says which options it takes, what the rest of the
        /// configuration must hold, and builds the gate. A mode no feature registers is refused as
        /// the configuration is read, and one whose feature is not configured when the gateway starts.
        public struct Access: Sendable, Hashable, CustomStringConvertible {
            /// The mode's name, as the configuration spells it (`app-token`).
            public var mode: String
            /// The route's options for its mode, as given (`audience`, `digestMD5`…).
            public var options: [String: Option]

            /// One option's value: the configuration's options are strings and switches.
            public enum Option: Sendable, Hashable {
                case string(String)
                case bool(Bool)
            }

            public init(mode: String, options: [String: Option] = [:]) {
                self.mode = mode
                self.options = options
            }

            /// A string option, when given.
            public func string(_ name: String) -> String? {
                if case .string(let value) = options[name] { return value }
                return nil
            }

            /// A switch, off when not given.
            public func flag(_ name: String) -> Bool {
                if case .bool(let value) = options[name] { return value }
                return false
            }

            public var description: String { mode }

            // The modes as code names them (`.appAttest`, `.password(options)`); the names are the
            // owning features' (`AccessMode.name`).

            /// Passed through unverified.
            public static var open: Access { Access(mode: "open") }
            /// Any valid signature, whatever its key's trust level.
            public static var verified: Access { Access(mode: "verified") }
            /// A signature whose key has at least this trust level; `appAttest` and
            /// `androidKeyAttestation` ask for that platform's attestation, `attested` for either.
            public static var sharedSecret: Access { Access(mode: "shared-secret") }
            public static var deviceKey: Access { Access(mode: "device-key") }
            public static var appAttest: Access { Access(mode: "app-attest") }
            public static var androidKeyAttestation: Access { Access(mode: "android-key-attestation") }
            public static var attested: Access { Access(mode: "attested") }
            /// Mutual TLS with a certificate from the device CA.
            public static var clientCertificate: Access { Access(mode: "client-certificate") }
            /// The seeds' `msg` + `hmac` query scheme, under the shared secret `keyId`.
            public static func legacyQueryHMAC(keyId: String) -> Access { Access(mode: "legacy-query-hmac", options: ["keyId": .string(keyId)]) }
            /// An encrypted body under the `legacyEnvelope` keys, forwarded decrypted.
            public static var legacyEnvelope: Access { Access(mode: "legacy-envelope") }
            /// A user's password: HTTP Digest, or Basic over TLS (`passwords`).
            public static var password: Access { password(PasswordRouteOptions()) }
            public static func password(_ options: PasswordRouteOptions) -> Access { Access(mode: "password", options: Self.options(options)) }
            /// A user's password, or a signed request of a registered device (device key or better).
            public static var passwordOrDevice: Access { passwordOrDevice(PasswordRouteOptions()) }
            public static func passwordOrDevice(_ options: PasswordRouteOptions) -> Access {
                Access(mode: "password-or-device", options: Self.options(options))
            }
            /// A signature by any registered key and a Play Integrity token bound to it
            /// (`androidAttestation.playIntegrity`).
            public static var playIntegrity: Access { Access(mode: "play-integrity") }
            /// A Signet app token in `Signet-Token` (`tokens`), for `audience` (any of
            /// `tokens.audience` when `nil`).
            public static var appToken: Access { appToken(audience: nil) }
            public static func appToken(audience: String?) -> Access {
                Access(mode: "app-token", options: audience.map { ["audience": .string($0)] } ?? [:])
            }
            /// A Firebase App Check token in `X-Firebase-AppCheck` (`firebaseAppCheck`); each
            /// accepted once when `consumeTokens` (Firebase's replay protection, across instances).
            public static var firebaseAppCheck: Access { firebaseAppCheck(consumeTokens: false) }
            public static func firebaseAppCheck(consumeTokens: Bool) -> Access {
                Access(mode: "firebase-app-check", options: consumeTokens ? ["consumeAppCheckTokens": .bool(true)] : [:])
            }
            /// Either, during a migration from Firebase App Check.
            public static var appTokenOrFirebase: Access { appTokenOrFirebase(audience: nil, consumeTokens: false) }
            public static func appTokenOrFirebase(audience: String?, consumeTokens: Bool) -> Access {
                var options: [String: Option] = [:]
                if let audience { options["audience"] = .string(audience) }
                if consumeTokens { options["consumeAppCheckTokens"] = .bool(true) }
                return Access(mode: "app-token-or-firebase-app-check", options: options)
            }

            private static func options(_ password: PasswordRouteOptions) -> [String: Option] {
                var options: [String: Option] = [:]
                if password.allowMD5 { options["digestMD5"] = .bool(true) }
                if password.requireAuthInt { options["requireAuthInt"] = .bool(true) }
                if password.keepAuthorization { options["keepAuthorization"] = .bool(true) }
                return options
            }
        }
    }
}

extension GatewayConfiguration.Route {
    /// `keyId=…`, `audience=…` and the switches that are on, in the order the mode declares them,
    /// as the route table prints them.
    var optionsText: String {
        let declared = AccessModeRegistry.mode(named: access.mode)?.options.map(\.name) ?? access.options.keys.sorted()
        return declared.compactMap { name in
            switch access.options[name] {
            case .string(let value): "\(name)=\(value)"
            case .bool(true): name
            default: nil
            }
        }
        .joined(separator: " ")
    }
}

extension GatewayConfiguration.Route: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static let ownKeys: Set<String> = ["prefix", "methods", "access", "mode"]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        prefix = try container.decode(String.self, forKey: Key("prefix"))
        methods = try container.decodeIfPresent([String].self, forKey: Key("methods"))
        if let text = try container.decodeIfPresent(String.self, forKey: Key("mode")) {
            guard let mode = Mode(rawValue: text) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath + [Key("mode")],
                        debugDescription: "\(text.debugDescription) is not one of \(Mode.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                )
            }
            self.mode = mode
        } else {
            mode = .enforce
        }
        let name = try container.decode(String.self, forKey: Key("access"))
        guard let mode = AccessModeRegistry.mode(named: name) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [Key("access")],
                    debugDescription: "\(name.debugDescription) is not one of \(AccessModeRegistry.modes.map(\.name).joined(separator: ", "))"
                )
            )
        }
        let at = GatewayConfiguration.path(decoder.codingPath)
        var options: [String: Access.Option] = [:]
        // The keys a route of this mode may carry are the mode's; another mode's option is refused,
        // not ignored.
        let given = container.allKeys.filter { !Self.ownKeys.contains($0.stringValue) }
        for key in given.sorted(by: { $0.stringValue < $1.stringValue }) {
            guard let option = mode.options.first(where: { $0.name == key.stringValue }) else {
                let owners = AccessModeRegistry.modes.filter { $0.options.contains { $0.name == key.stringValue } }
                // A key no mode takes is not read: the decoder refuses it (`not a configuration key`).
                guard let first = owners.first, !(try container.decodeNil(forKey: key)) else { continue }
                // Options that travel together are named together (`digestMD5, requireAuthInt and keepAuthorization`).
                let siblings = first.options.filter { sibling in owners.allSatisfy { $0.options.contains { $0.name == sibling.name } } }
                let names = siblings.map(\.name)
                let subject = names.count == 1 ? "\(at).\(key.stringValue) is" : "\(at): \(names.dropLast().joined(separator: ", ")) and \(names.last!) are"
                throw ConfigurationError.invalid(names.count == 1 ? "\(at).\(key.stringValue)" : at, "\(subject) for \(first.optionsAreFor)")
            }
            guard !(try container.decodeNil(forKey: key)) else { continue }
            switch option.kind {
            case .string: options[option.name] = .string(try container.decode(String.self, forKey: key))
            case .bool: options[option.name] = .bool(try container.decode(Bool.self, forKey: key))
            }
        }
        for option in mode.options where option.required && options[option.name] == nil {
            throw ConfigurationError.invalid("\(at).\(option.name)", "\(at).\(option.name): a \(mode.name) route needs \(option.purpose)")
        }
        access = Access(mode: name, options: options)
    }

    /// Flat again, with the route's options as given.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(prefix, forKey: Key("prefix"))
        try container.encodeIfPresent(methods, forKey: Key("methods"))
        try container.encode(access.mode, forKey: Key("access"))
        if mode != .enforce { try container.encode(mode.rawValue, forKey: Key("mode")) }
        for (name, value) in access.options.sorted(by: { $0.key < $1.key }) {
            switch value {
            case .string(let text): try container.encode(text, forKey: Key(name))
            case .bool(let flag): try container.encode(flag, forKey: Key(name))
            }
        }
    }
}
