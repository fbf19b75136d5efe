// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware
import SignetStore

/// Everything `signet serve` reads: a JSON file, then `SIGNET_*` environment variables on top.
///
/// See `docs/gateway.md` for a commented sample.
public struct GatewayConfiguration: Codable, Sendable {
    public struct Listen: Codable, Sendable {
        public var host: String = "127.0.0.1"
        public var port: Int = 8080
        public init(host: String = "127.0.0.1", port: Int = 8080) {
            self.host = host
            self.port = port
        }
    }

    /// Where state lives: `{"sqlite": "signet.sqlite"}`, `{"postgres": "postgres://…"}` or
    /// `{"memory": true}` — exactly one.
    public enum Store: Codable, Sendable, Equatable {
        /// The embedded default: one SQLite file (created on first start).
        case sqlite(String)
        /// A PostgreSQL URL, for several gateway instances.
        case postgres(String)
        /// Nothing survives a restart; for tests and trials.
        case memory

        public var sqlite: String? { if case .sqlite(let path) = self { path } else { nil } }
        public var postgres: String? { if case .postgres(let url) = self { url } else { nil } }

        private enum Kind: String, CodingKey, CaseIterable { case sqlite, postgres, memory }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Kind.self)
            guard container.allKeys.count == 1, let kind = container.allKeys.first else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "configure exactly one of sqlite, postgres, memory")
                )
            }
            switch kind {
            case .sqlite: self = .sqlite(try container.decode(String.self, forKey: .sqlite))
            case .postgres: self = .postgres(try container.decode(String.self, forKey: .postgres))
            case .memory:
                guard try container.decode(Bool.self, forKey: .memory) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: decoder.codingPath + [kind], debugDescription: "only true turns it on")
                    )
                }
                self = .memory
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Kind.self)
            switch self {
            case .sqlite(let path): try container.encode(path, forKey: .sqlite)
            case .postgres(let url): try container.encode(url, forKey: .postgres)
            case .memory: try container.encode(true, forKey: .memory)
            }
        }
    }

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
        }

        public init(prefix: String, methods: [String]? = nil, access: Access, keyId: String? = nil) {
            self.prefix = prefix
            self.methods = methods
            self.access = access
            self.keyId = keyId
        }
    }

    public struct SharedSecret: Codable, Sendable {
        public var keyId: String
        /// The secret, base64; decoded before use.
        public var secretBase64: String
        public var notBefore: Date?
        public var notAfter: Date?
        public init(keyId: String, secretBase64: String, notBefore: Date? = nil, notAfter: Date? = nil) {
            self.keyId = keyId
            self.secretBase64 = secretBase64
            self.notBefore = notBefore
            self.notAfter = notAfter
        }
    }

    public struct Policy: Codable, Sendable {
        public var maxAgeSeconds: Int64 = 300
        public var clockSkewSeconds: Int64 = 30
        public var requireNonce: Bool = true
        public init() {}
    }

    public struct ResponseSigning: Codable, Sendable {
        /// Private key file (PEM or JWK) of the gateway.
        public var keyFile: String
        public var keyId: String
        public init(keyFile: String, keyId: String) {
            self.keyFile = keyFile
            self.keyId = keyId
        }
    }

    /// App Attest registration and the `apple-app-attest` algorithm; off when absent.
    public struct AppAttest: Codable, Sendable {
        /// Accepted App IDs, `TEAMID.bundle.id`.
        public var appIDs: [String]
        public var allowDevelopment: Bool?
        public var clientDataHash: ClientDataHash?
        /// PEM file of extra trusted roots (the simulator's, in development). Apple's root is used
        /// when this is absent; when present, only these roots are trusted.
        public var trustedRootsFile: String?
        /// How many counters below the highest may still arrive, each once (an app signing
        /// requests concurrently delivers them out of order); 0, the default, is strict. At most 63.
        public var counterWindow: Int?
        public init(
            appIDs: [String],
            allowDevelopment: Bool? = nil,
            clientDataHash: ClientDataHash? = nil,
            trustedRootsFile: String? = nil,
            counterWindow: Int? = nil
        ) {
            self.counterWindow = counterWindow
            self.appIDs = appIDs
            self.allowDevelopment = allowDevelopment
            self.clientDataHash = clientDataHash
            self.trustedRootsFile = trustedRootsFile
        }
    }

    /// What the app passed to App Attest as `clientDataHash` for a challenge.
    public enum ClientDataHash: String, Sendable, ConfigurationChoice {
        /// SHA-256 of the challenge's UTF-8 bytes (the default).
        case sha256
        /// The challenge's bytes themselves.
        case raw
    }

    /// HTTPS for the gateway itself, and mutual TLS.
    public struct TLS: Codable, Sendable {
        /// PEM certificate chain, leaf first.
        public var certificateFile: String?
        /// PEM private key of the leaf.
        public var keyFile: String?
        /// Generate a development CA and server certificate (for `developmentHosts`) when the files
        /// are absent — written to them when paths are given, kept in memory otherwise. The gateway
        /// prints the pins at start. Never in production.
        public var development: Bool?
        public var developmentHosts: [String]?
        /// Ask clients for a certificate from the device CA (mutual TLS). Optional at the TLS layer;
        /// routes with access `client-certificate` refuse requests without one.
        public var clientCertificates: Bool?
        public init(
            certificateFile: String? = nil,
            keyFile: String? = nil,
            development: Bool? = nil,
            developmentHosts: [String]? = nil,
            clientCertificates: Bool? = nil
        ) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.development = development
            self.developmentHosts = developmentHosts
            self.clientCertificates = clientCertificates
        }
    }

    /// The CA that issues device client certificates from registration CSRs.
    public struct DeviceCA: Codable, Sendable {
        /// PEM files; created (a new P-256 CA) when both are absent.
        public var certificateFile: String
        public var keyFile: String
        public var validityDays: Int?
        public init(certificateFile: String, keyFile: String, validityDays: Int? = nil) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.validityDays = validityDays
        }
    }

    /// Oblivious HTTP (RFC 9458): requests encrypted to the gateway's HPKE keys, sent straight to it.
    public struct OHTTP: Codable, Sendable {
        public enum KEM: String, ConfigurationChoice, Sendable {
            case x25519, p256
        }

        /// One HPKE key: current, next or retiring, by its window.
        public struct Key: Codable, Sendable {
            /// 0 to 255; never reused within the replay window of an earlier key with the same id.
            public var keyId: Int
            /// PEM (PKCS #8) of an X25519 or P-256 private key; created when absent, with `kem`.
            public var keyFile: String
            /// The KEM of a key created on first start; a key read from a file has its own.
            public var kem: KEM?
            /// Not served nor accepted before this time.
            public var notBefore: Date?
            /// Not served nor accepted after this time.
            public var notAfter: Date?

            public init(keyId: Int, keyFile: String, kem: KEM? = nil, notBefore: Date? = nil, notAfter: Date? = nil) {
                self.keyId = keyId
                self.keyFile = keyFile
                self.kem = kem
                self.notBefore = notBefore
                self.notAfter = notAfter
            }
        }

        public var keys: [Key]
        /// How long an encapsulated key is remembered, so the same encapsulation is refused again
        /// (300 s when not given).
        public var replayWindowSeconds: Int?
        /// Requests per client address per minute that fail to decapsulate before `rate_limited`
        /// (30 when not given).
        public var decapsulationFailuresPerSourcePerMinute: Int?

        /// Encapsulated requests per client address per minute (600 when not given): anyone with the
        /// public key can make ones that open, and each is remembered for the replay window.
        public var requestsPerSourcePerMinute: Int?

        var replayWindow: Int { replayWindowSeconds ?? 300 }
        var failuresPerMinute: Int { decapsulationFailuresPerSourcePerMinute ?? 30 }
        var requestsPerMinute: Int { requestsPerSourcePerMinute ?? 600 }

        public init(keys: [Key]) {
            self.keys = keys
        }
    }

    /// Encrypted bodies of apps already shipped, read on `legacy-envelope` routes.
    public struct LegacyEnvelope: Codable, Sendable {
        public enum Format: String, ConfigurationChoice, Sendable {
            /// `{"mac", "iv", "payload", "version"}`, base64 members (names in `fields`).
            case json
            /// The RNCryptor v3 binary format.
            case rncryptor
        }

        public enum Hash: String, ConfigurationChoice, Sendable {
            case sha1, sha256, sha512
        }

        /// The JSON members' names; `version: ""` for envelopes that name no version.
        public struct Fields: Codable, Sendable {
            public var mac: String?
            public var iv: String?
            public var payload: String?
            public var version: String?
        }

        /// One key version: 64 bytes of secret (encryption key, then MAC key), or a password with
        /// its two salts, derived once at start.
        public struct Key: Codable, Sendable {
            public var version: String
            public var secretBase64: String?
            public var password: String?
            public var encryptionSaltBase64: String?
            public var macSaltBase64: String?
            /// PBKDF2 rounds (RNCryptor's 10,000 when not given).
            public var iterations: Int?
            /// PBKDF2's hash (RNCryptor's SHA-1 when not given).
            public var hash: Hash?

            public init(version: String, secretBase64: String) {
                self.version = version
                self.secretBase64 = secretBase64
            }

            public init(version: String, password: String, encryptionSaltBase64: String, macSaltBase64: String, iterations: Int? = nil, hash: Hash? = nil) {
                self.version = version
                self.password = password
                self.encryptionSaltBase64 = encryptionSaltBase64
                self.macSaltBase64 = macSaltBase64
                self.iterations = iterations
                self.hash = hash
            }
        }

        public var format: Format
        public var fields: Fields?
        public var keys: [Key]
        /// The `Content-Type` the upstream receives the plaintext with (`application/json` when not given).
        public var plaintextContentType: String?

        public init(format: Format, keys: [Key]) {
            self.format = format
            self.keys = keys
        }
    }

    /// A signed trust document (`signet trust sign`) served at `GET /signet/v1/trust`.
    public struct TrustDocument: Codable, Sendable {
        /// The compact JWS.
        public var file: String

        public init(file: String) {
            self.file = file
        }
    }

    public var listen = Listen()
    /// The protected backend, e.g. `http://127.0.0.1:9000`.
    public var upstream: String
    /// Scheme and authority clients sign (`https`, `api.example.com`) when a proxy terminates TLS.
    /// The scheme defaults to how the gateway itself is reached: `https` with `tls`, `http` without.
    public var publicScheme: String?
    public var publicAuthority: String?
    public var store = Store.sqlite("signet.sqlite")
    public var routes: [Route] = [Route(prefix: "/", access: .verified)]
    public var sharedSecrets: [SharedSecret] = []
    /// Whether `POST /signet/v1/devices` registers keys that no attestation vouches for.
    public var allowUnattestedDevices = true
    public var challengeTTLSeconds: Int = 120
    public var maxOutstandingChallenges: Int = 10_000
    public var challengesPerSourcePerMinute: Int = 60
    public var maxBodyBytes: Int = 1 << 20
    public var policy = Policy()
    public var responseSigning: ResponseSigning?
    /// Bearer token for the admin API (device revocation); the admin API is off without one.
    public var adminToken: String?
    /// Adds the signature base to problem responses. Never in production.
    public var debug = false
    public var sweepIntervalSeconds: Int = 30
    /// How long a resolved device key is reused before the store is asked again; a revocation made
    /// through another instance takes effect within this time. 0 turns the cache off.
    public var deviceCacheMilliseconds: Int = 2000
    public var appAttest: AppAttest?
    /// How long the upstream has to answer before `upstream_unavailable` (503).
    public var upstreamTimeoutSeconds: Int = 30
    public var tls: TLS?
    public var deviceCA: DeviceCA?
    /// Pin failure reports accepted per client address per minute.
    public var pinReportsPerSourcePerMinute: Int = 30
    public var ohttp: OHTTP?
    public var legacyEnvelope: LegacyEnvelope?
    public var trustDocument: TrustDocument?
    /// Password login (HTTP Digest and Basic) and user accounts; off when absent.
    public var passwords: Passwords?

    public init(upstream: String) {
        self.upstream = upstream
    }

    /// Decodes a configuration document over the defaults declared above — the only place they
    /// live: a key the document leaves out keeps its default. Objects merge key by key (so
    /// `"policy": {"maxAgeSeconds": 60}` keeps the other policy defaults); arrays, values and the
    /// `store` (one of three kinds) replace.
    public static func decode(_ data: Data) throws -> GatewayConfiguration {
        let given: Any
        do {
            given = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not valid JSON"))
        }
        guard let document = given as? [String: Any] else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a JSON object"))
        }
        // A misspelt key would otherwise be ignored and its default silently used.
        let known = Set(Mirror(reflecting: GatewayConfiguration(upstream: "")).children.compactMap(\.label))
        if let unknown = document.keys.sorted().first(where: { !known.contains($0) }) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [],
                    debugDescription: "\(unknown.debugDescription) is not a configuration key (known: \(known.sorted().joined(separator: ", ")))"
                )
            )
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        // No default upstream: leaving it out is an error, not an empty URL.
        var defaults = try JSONSerialization.jsonObject(with: encoder.encode(GatewayConfiguration(upstream: "")))
            as? [String: Any] ?? [:]
        defaults["upstream"] = nil
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let merged = Self.merge(document, over: defaults, replacing: ["store"])
        let configuration = try decoder.decode(
            GatewayConfiguration.self,
            from: JSONSerialization.data(withJSONObject: merged)
        )
        // Inside objects too (`routes[0].acess`, `policy.maxAgeSecond`): what was decoded, encoded
        // again, holds every key decoding used; a given key missing there was not used.
        let used = try JSONSerialization.jsonObject(with: encoder.encode(configuration))
        if let unknown = Self.unusedKey(given: document, used: used, path: "") {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "\(unknown) is not a configuration key")
            )
        }
        return configuration
    }

    /// The first key of `given` (depth first, in sorted order) with no counterpart in `used`.
    private static func unusedKey(given: Any, used: Any, path: String) -> String? {
        switch (given, used) {
        case (let given as [String: Any], let used as [String: Any]):
            for key in given.keys.sorted() {
                let at = path.isEmpty ? key : path + "." + key
                guard let inner = used[key] else {
                    if given[key] is NSNull { continue }  // an optional set to null: absent either way
                    return at
                }
                if let found = unusedKey(given: given[key]!, used: inner, path: at) { return found }
            }
        case (let given as [Any], let used as [Any]):
            for (index, element) in zip(given, used).map({ $0 }).enumerated() {
                if let found = unusedKey(given: element.0, used: element.1, path: "\(path)[\(index)]") {
                    return found
                }
            }
        default:
            break
        }
        return nil
    }

    private static func merge(_ given: [String: Any], over defaults: [String: Any], replacing: Set<String>) -> [String: Any] {
        var result = defaults
        for (key, value) in given {
            if !replacing.contains(key), let inner = value as? [String: Any], let base = defaults[key] as? [String: Any] {
                result[key] = merge(inner, over: base, replacing: [])
            } else {
                result[key] = value
            }
        }
        return result
    }

    /// Reads a JSON file, then applies `SIGNET_LISTEN_HOST`, `SIGNET_LISTEN_PORT`, `SIGNET_UPSTREAM`,
    /// `SIGNET_STORE` (a file path or a `postgres://` URL), `SIGNET_PUBLIC_SCHEME`,
    /// `SIGNET_PUBLIC_AUTHORITY`, `SIGNET_ADMIN_TOKEN` and `SIGNET_DEBUG`.
    public static func load(file: String?, environment: [String: String]) throws -> GatewayConfiguration {
        var configuration: GatewayConfiguration
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw SignetError(.malformedMessage, "cannot read configuration file \(file)")
            }
            do {
                configuration = try decode(data)
            } catch let error as DecodingError {
                throw SignetError(.malformedMessage, "configuration \(file): \(Self.describe(error))")
            } catch {
                throw SignetError(.malformedMessage, "configuration \(file): \(error)")
            }
        } else if let upstream = environment["SIGNET_UPSTREAM"] {
            configuration = GatewayConfiguration(upstream: upstream)
        } else {
            throw SignetError(.malformedMessage, "give --config FILE or SIGNET_UPSTREAM")
        }
        if let host = environment["SIGNET_LISTEN_HOST"] { configuration.listen.host = host }
        if let port = environment["SIGNET_LISTEN_PORT"].flatMap(Int.init) { configuration.listen.port = port }
        if let upstream = environment["SIGNET_UPSTREAM"] { configuration.upstream = upstream }
        if let store = environment["SIGNET_STORE"] {
            configuration.store = store.hasPrefix("postgres") ? .postgres(store) : .sqlite(store)
        }
        if let scheme = environment["SIGNET_PUBLIC_SCHEME"] { configuration.publicScheme = scheme }
        if let authority = environment["SIGNET_PUBLIC_AUTHORITY"] { configuration.publicAuthority = authority }
        if let token = environment["SIGNET_ADMIN_TOKEN"] { configuration.adminToken = token }
        if let debug = environment["SIGNET_DEBUG"] { configuration.debug = ["1", "true", "yes"].contains(debug) }
        try configuration.validate()
        return configuration
    }

    /// `routes[2].access: expected a string`: the key path, then what was wrong there.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.reduce("") { text, key in
                if let index = key.intValue { return text + "[\(index)]" }
                return text.isEmpty ? key.stringValue : text + "." + key.stringValue
            }
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(type), found null"
        case .dataCorrupted(let context):
            let at = path(context.codingPath)
            return at.isEmpty ? context.debugDescription : "\(at): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// The scheme clients sign: the configured one, else that of the gateway's own listener.
    public var signedScheme: String { publicScheme ?? (tls == nil ? "http" : "https") }

    /// Checks what can be checked before starting.
    public func validate() throws {
        guard upstream.hasPrefix("http://") || upstream.hasPrefix("https://") else {
            throw SignetError(.malformedMessage, "upstream must be an http(s) URL")
        }
        if let window = appAttest?.counterWindow, !(0...CounterWindow.maximumWidth).contains(window) {
            throw SignetError(.malformedMessage, "appAttest.counterWindow is 0 to \(CounterWindow.maximumWidth)")
        }
        for (index, route) in routes.enumerated() {
            do {
                _ = try route.requirement()
                try RouteTable.checkPrefix(route.prefix)
            } catch let error as SignetError {
                throw SignetError(.malformedMessage, "routes[\(index)].\(error.reason)")
            }
        }
        if let ohttp { try ohttp.validate() }
        if routes.contains(where: { $0.access == .legacyEnvelope }), legacyEnvelope == nil {
            throw SignetError(.malformedMessage, "legacy-envelope routes need legacyEnvelope with its keys")
        }
        try validatePasswords()
        for route in routes where try route.requirement() == .clientCertificate {
            guard tls?.clientCertificates == true, deviceCA != nil else {
                throw SignetError(
                    .malformedMessage,
                    "route \(route.prefix) needs client certificates: set tls.clientCertificates and deviceCA"
                )
            }
        }
        if let tls {
            guard (tls.certificateFile == nil) == (tls.keyFile == nil) else {
                throw SignetError(.malformedMessage, "tls needs both certificateFile and keyFile")
            }
            guard tls.certificateFile != nil || tls.development == true else {
                throw SignetError(.malformedMessage, "tls needs certificateFile and keyFile, or development: true")
            }
            guard tls.clientCertificates != true || deviceCA != nil else {
                throw SignetError(.malformedMessage, "tls.clientCertificates needs a deviceCA to check them against")
            }
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
                throw SignetError(.malformedMessage, "keyId: a legacy-query-hmac route needs the shared secret's keyId")
            }
            return .legacyQueryHMAC(keyID: keyId)
        case .legacyEnvelope: return .legacyEnvelope
        case .password: return .password(passwordOptions)
        case .passwordOrDevice: return .passwordOrDevice(passwordOptions)
        case .sharedSecret: return .trustLevel(.sharedSecret)
        case .deviceKey: return .trustLevel(.deviceKey)
        case .appAttest: return .trustLevel(.appAttest)
        }
    }
}

extension GatewayConfiguration {
    /// The registration endpoints' part of the file.
    public var registration: RegistrationConfiguration {
        RegistrationConfiguration(
            allowUnattestedDevices: allowUnattestedDevices,
            challengeTTLSeconds: challengeTTLSeconds,
            maxOutstandingChallenges: maxOutstandingChallenges,
            challengesPerSourcePerMinute: challengesPerSourcePerMinute,
            adminToken: adminToken,
            requirePasswordLogin: passwords?.requireForRegistration ?? false
        )
    }
}

extension GatewayConfiguration.OHTTP {
    /// Key ids in range, windows in order, and no id reused while a client may still hold the
    /// earlier key's configuration or its encapsulations may still be replayed.
    func validate() throws {
        guard !keys.isEmpty else { throw SignetError(.malformedMessage, "ohttp.keys: give at least one key") }
        guard replayWindow > 0, failuresPerMinute > 0, requestsPerMinute > 0 else {
            throw SignetError(
                .malformedMessage,
                "ohttp: replayWindowSeconds, decapsulationFailuresPerSourcePerMinute and requestsPerSourcePerMinute are positive"
            )
        }
        for (index, key) in keys.enumerated() {
            guard (0...255).contains(key.keyId) else {
                throw SignetError(.malformedMessage, "ohttp.keys[\(index)].keyId: \(key.keyId) is not 0 to 255")
            }
            if let notBefore = key.notBefore, let notAfter = key.notAfter, notAfter <= notBefore {
                throw SignetError(.malformedMessage, "ohttp.keys[\(index)]: notAfter is not after notBefore")
            }
            for (otherIndex, other) in keys.enumerated() where otherIndex < index && other.keyId == key.keyId {
                let window = TimeInterval(replayWindow)
                let apart =
                    other.notAfter.map { end in key.notBefore.map { end.addingTimeInterval(window) <= $0 } ?? false } ?? false
                    || key.notAfter.map { end in other.notBefore.map { end.addingTimeInterval(window) <= $0 } ?? false } ?? false
                guard apart else {
                    throw SignetError(
                        .malformedMessage,
                        "ohttp.keys[\(index)].keyId: \(key.keyId) is also ohttp.keys[\(otherIndex)]'s, and their windows are not \(replayWindow) s apart"
                    )
                }
            }
        }
    }
}

extension GatewayConfiguration.LegacyEnvelope {
    /// The configured keys, passwords derived now (PBKDF2 is slow on purpose: once, never per request).
    public func envelopeKeys() throws -> [EnvelopeKey] {
        guard !keys.isEmpty else { throw SignetError(.malformedMessage, "legacyEnvelope.keys: give at least one key") }
        return try keys.enumerated().map { index, key in
            let at = "legacyEnvelope.keys[\(index)]"
            if let secret = key.secretBase64 {
                guard key.password == nil, let bytes = Base64.decode(secret), bytes.count == 64 else {
                    throw SignetError(.malformedMessage, "\(at).secretBase64: 64 bytes (encryption key, then MAC key), and no password beside it")
                }
                return try EnvelopeKey(version: key.version, encryptionKey: Array(bytes[..<32]), macKey: Array(bytes[32...]))
            }
            guard let password = key.password, let encryptionSalt = key.encryptionSaltBase64.flatMap(Base64.decode),
                let macSalt = key.macSaltBase64.flatMap(Base64.decode), !encryptionSalt.isEmpty, !macSalt.isEmpty
            else {
                throw SignetError(.malformedMessage, "\(at): secretBase64, or password with encryptionSaltBase64 and macSaltBase64")
            }
            let hash: EnvelopeKey.PBKDF2Hash =
                switch key.hash ?? .sha1 {
                case .sha1: .sha1
                case .sha256: .sha256
                case .sha512: .sha512
                }
            guard (1...10_000_000).contains(key.iterations ?? RNCryptorV3.rounds) else {
                throw SignetError(.malformedMessage, "\(at).iterations: 1 to 10,000,000")
            }
            return try EnvelopeKey.derive(
                version: key.version,
                password: Array(password.utf8),
                encryptionSalt: encryptionSalt,
                macSalt: macSalt,
                rounds: key.iterations ?? RNCryptorV3.rounds,
                hash: hash
            )
        }
    }

    /// The JSON member names, defaults for those not given.
    public var fieldNames: JSONEnvelope.FieldNames {
        let version = fields?.version ?? "version"
        return JSONEnvelope.FieldNames(
            mac: fields?.mac ?? "mac",
            iv: fields?.iv ?? "iv",
            payload: fields?.payload ?? "payload",
            version: version.isEmpty ? nil : version
        )
    }
}
