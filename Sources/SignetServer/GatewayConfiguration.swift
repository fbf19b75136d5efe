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

    /// Where state lives: exactly one of the three.
    public struct Store: Codable, Sendable {
        public var sqlite: String?
        public var postgres: String?
        public var memory: Bool?
        public init(sqlite: String? = nil, postgres: String? = nil, memory: Bool? = nil) {
            self.sqlite = sqlite
            self.postgres = postgres
            self.memory = memory
        }
    }

    public struct Route: Codable, Sendable {
        /// A path prefix; the longest matching prefix wins.
        public var prefix: String
        /// Methods the rule covers; all when absent.
        public var methods: [String]?
        /// `open`, `verified`, `client-certificate` (mutual TLS with a device CA certificate), a
        /// trust level (`device-key`, `app-attest`, `shared-secret`) as a minimum for a signed
        /// request, or `legacy-query-hmac`.
        public var access: String
        /// For `legacy-query-hmac`: the shared secret's key id.
        public var keyId: String?

        public init(prefix: String, methods: [String]? = nil, access: String, keyId: String? = nil) {
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
        /// `sha256` (clientDataHash = SHA256(challenge), the default) or `raw` (the challenge bytes).
        public var clientDataHash: String?
        /// PEM file of extra trusted roots (the simulator's, in development). Apple's root is used
        /// when this is absent; when present, only these roots are trusted.
        public var trustedRootsFile: String?
        /// How many counters below the highest may still arrive, each once (an app signing
        /// requests concurrently delivers them out of order); 0, the default, is strict. At most 63.
        public var counterWindow: Int?
        public init(
            appIDs: [String],
            allowDevelopment: Bool? = nil,
            clientDataHash: String? = nil,
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

    public var listen = Listen()
    /// The protected backend, e.g. `http://127.0.0.1:9000`.
    public var upstream: String
    /// Scheme and authority clients sign (`https`, `api.example.com`) when a proxy terminates TLS.
    /// The scheme defaults to how the gateway itself is reached: `https` with `tls`, `http` without.
    public var publicScheme: String?
    public var publicAuthority: String?
    public var store = Store(sqlite: "signet.sqlite")
    public var routes: [Route] = [Route(prefix: "/", access: "verified")]
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

    public init(upstream: String) {
        self.upstream = upstream
    }

    enum CodingKeys: String, CodingKey {
        case listen, upstream, publicScheme, publicAuthority, store, routes, sharedSecrets, allowUnattestedDevices,
            challengeTTLSeconds, maxOutstandingChallenges, challengesPerSourcePerMinute, maxBodyBytes, policy,
            responseSigning, adminToken, debug, sweepIntervalSeconds, deviceCacheMilliseconds, appAttest,
            upstreamTimeoutSeconds, tls, deviceCA, pinReportsPerSourcePerMinute
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        upstream = try c.decode(String.self, forKey: .upstream)
        listen = try c.decodeIfPresent(Listen.self, forKey: .listen) ?? listen
        publicScheme = try c.decodeIfPresent(String.self, forKey: .publicScheme)
        publicAuthority = try c.decodeIfPresent(String.self, forKey: .publicAuthority)
        store = try c.decodeIfPresent(Store.self, forKey: .store) ?? store
        routes = try c.decodeIfPresent([Route].self, forKey: .routes) ?? routes
        sharedSecrets = try c.decodeIfPresent([SharedSecret].self, forKey: .sharedSecrets) ?? []
        allowUnattestedDevices = try c.decodeIfPresent(Bool.self, forKey: .allowUnattestedDevices) ?? true
        challengeTTLSeconds = try c.decodeIfPresent(Int.self, forKey: .challengeTTLSeconds) ?? challengeTTLSeconds
        maxOutstandingChallenges =
            try c.decodeIfPresent(Int.self, forKey: .maxOutstandingChallenges) ?? maxOutstandingChallenges
        challengesPerSourcePerMinute =
            try c.decodeIfPresent(Int.self, forKey: .challengesPerSourcePerMinute) ?? challengesPerSourcePerMinute
        maxBodyBytes = try c.decodeIfPresent(Int.self, forKey: .maxBodyBytes) ?? maxBodyBytes
        policy = try c.decodeIfPresent(Policy.self, forKey: .policy) ?? policy
        responseSigning = try c.decodeIfPresent(ResponseSigning.self, forKey: .responseSigning)
        adminToken = try c.decodeIfPresent(String.self, forKey: .adminToken)
        debug = try c.decodeIfPresent(Bool.self, forKey: .debug) ?? false
        sweepIntervalSeconds = try c.decodeIfPresent(Int.self, forKey: .sweepIntervalSeconds) ?? sweepIntervalSeconds
        deviceCacheMilliseconds =
            try c.decodeIfPresent(Int.self, forKey: .deviceCacheMilliseconds) ?? deviceCacheMilliseconds
        appAttest = try c.decodeIfPresent(AppAttest.self, forKey: .appAttest)
        upstreamTimeoutSeconds =
            try c.decodeIfPresent(Int.self, forKey: .upstreamTimeoutSeconds) ?? upstreamTimeoutSeconds
        tls = try c.decodeIfPresent(TLS.self, forKey: .tls)
        deviceCA = try c.decodeIfPresent(DeviceCA.self, forKey: .deviceCA)
        pinReportsPerSourcePerMinute =
            try c.decodeIfPresent(Int.self, forKey: .pinReportsPerSourcePerMinute) ?? pinReportsPerSourcePerMinute
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
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            do {
                configuration = try decoder.decode(GatewayConfiguration.self, from: data)
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
            configuration.store = store.hasPrefix("postgres") ? Store(postgres: store) : Store(sqlite: store)
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
            return at.isEmpty ? "not valid JSON" : "\(at): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// The scheme clients sign: the configured one, else that of the gateway's own listener.
    public var signedScheme: String { publicScheme ?? (tls == nil ? "http" : "https") }

    /// Checks what can be checked before starting.
    public func validate() throws {
        let stores = [store.sqlite != nil, store.postgres != nil, store.memory == true].filter { $0 }.count
        guard stores == 1 else { throw SignetError(.malformedMessage, "configure exactly one store") }
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
    /// The `access` values a route may have.
    static let accessValues = ["open", "verified", "client-certificate", "legacy-query-hmac"]
        + TrustLevel.allCases.filter { $0 != .clientCertificate }.map(\.rawValue)

    func requirement() throws -> AccessRequirement {
        switch access {
        case "open": return .open
        case "verified": return .verified
        case "client-certificate": return .clientCertificate
        case "legacy-query-hmac":
            guard let keyId else {
                throw SignetError(.malformedMessage, "keyId: a legacy-query-hmac route needs the shared secret's keyId")
            }
            return .legacyQueryHMAC(keyID: keyId)
        default:
            guard let level = TrustLevel(rawValue: access), level != .clientCertificate else {
                throw SignetError(
                    .malformedMessage,
                    "access: \(access.debugDescription) is not one of \(Self.accessValues.joined(separator: ", "))"
                )
            }
            return .trustLevel(level)
        }
    }
}
