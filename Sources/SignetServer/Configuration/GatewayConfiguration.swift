// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware
import SignetStore

/// Everything `signet serve` reads: a JSON file, then `SIGNET_*` environment variables on top.
///
/// See `docs/gateway.md` for a commented sample.
public struct GatewayConfiguration: Codable, Sendable, Equatable {
    /// An address to listen on: `{"host": "127.0.0.1", "port": 8080}`, or the same as
    /// `"127.0.0.1:8080"` (`"[::1]:8080"` for IPv6).
    public struct Listen: Codable, Sendable, Equatable {
        public var host: String = "127.0.0.1"
        public var port: Int = 8080
        public init(host: String = "127.0.0.1", port: Int = 8080) {
            self.host = host
            self.port = port
        }

        private enum CodingKeys: String, CodingKey { case host, port }

        public init(from decoder: any Decoder) throws {
            let defaults = Listen()
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: decoder.codingPath, debugDescription: "\(text.debugDescription) is not \"host:port\"")
                    )
                }
                var host = String(text[..<colon])
                if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
                self.init(host: host, port: port)
                return
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                host: try container.decodeIfPresent(String.self, forKey: .host) ?? defaults.host,
                port: try container.decodeIfPresent(Int.self, forKey: .port) ?? defaults.port
            )
        }
    }

    public struct SharedSecret: Codable, Sendable, Equatable {
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

    public struct Policy: Codable, Sendable, Equatable {
        public var maxAgeSeconds: Int64 = 300
        public var clockSkewSeconds: Int64 = 30
        public var requireNonce: Bool = true
        /// Header fields every signed request must carry and cover, beside what Signet always asks
        /// (`x-app-version`, `authorization`): a 401 `component_not_covered` says so in
        /// `Accept-Signature`, which the SDK follows.
        public var coveredFields: [String]?
        public init() {}
    }

    public struct ResponseSigning: Codable, Sendable, Equatable {
        /// Private key file (PEM or JWK) of the gateway; a new P-256 key is written to it (0600) on
        /// first start when it does not exist, as the token and OHTTP keys are.
        public var keyFile: String
        public var keyId: String
        public init(keyFile: String, keyId: String) {
            self.keyFile = keyFile
            self.keyId = keyId
        }
    }

    /// A signed trust document (`signet trust sign`) served at `GET /signet/v1/trust`.
    public struct TrustDocument: Codable, Sendable, Equatable {
        /// The compact JWS.
        public var file: String

        public init(file: String) {
            self.file = file
        }
    }

    public var listen = Listen()
    /// This instance's name in the console's refusals and the metrics' `signet_build_info`: the
    /// host name when absent (a container's is its id; set it where that says nothing). Letters,
    /// digits, `.`, `_`, `:` and `-`, at most 64.
    public var instance: String?
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
    /// Whether operators may register debug devices by their public key (`POST
    /// /signet/v1/devices/debug`, the console), and their requests are taken: the simulator's and
    /// CI's stand-in for an attested device, at trust level `debug`, which `app-attest` and
    /// `android-key-attestation` routes refuse. Off by default.
    public var allowDebugDevices = false
    public var challengeTTLSeconds: Int = 120
    public var challengesPerSourcePerMinute: Int = 60
    public var maxBodyBytes: Int = 1 << 20
    public var policy = Policy()
    public var responseSigning: ResponseSigning?
    /// Bearer token for the admin API (device revocation); the admin API is off without one.
    public var adminToken: String?
    /// Public-key pins (`sha256/<base64>` of the SubjectPublicKeyInfo, as `signet pin` prints) of
    /// operators' client certificates: their holders sign in to the console over mutual TLS, without
    /// the admin token. Needs `tls.clientCertificates`, or `adminListener.tls` when there is one.
    public var adminCertificates: [String]?
    /// A listener of the operators' own: the console, the admin API and `/metrics`
    /// answer there and `404 not_found` on `listen`, so nothing the upstream serves on the apps'
    /// origin shares an origin with the console.
    public var adminListener: AdminListener?
    /// Where another proxy in front (nginx, Caddy, Traefik, Envoy) has requests judged by the
    /// routes, instead of sending them through Signet's own proxy (``AuthorizationListener``).
    public var authorizationListener: AuthorizationListener?
    /// Adds the signature base to problem responses. Never in production.
    public var debug = false
    /// Relaxes start-up checks meant for production (an `adminToken` shorter than 32 characters).
    /// Never in production.
    public var development = false
    public var sweepIntervalSeconds: Int = 30
    /// How long a resolved device key is reused before the store is asked again; a revocation made
    /// through another instance takes effect within this time. 0 turns the cache off.
    public var deviceCacheMilliseconds: Int = 2000
    public var appAttest: AppAttest?
    /// Android Key Attestation registration; off when absent.
    public var androidAttestation: AndroidAttestation?
    /// How long the upstream has to answer before `upstream_unavailable` (503).
    public var upstreamTimeoutSeconds: Int = 30
    /// How long a complete request may wait for the store, all that it asks of it together (key
    /// lookups, the nonce claim, a counter; the screen of its head has as long again): past it
    /// `503 store_unavailable` with `Retry-After`, and the request is never forwarded. Well under a
    /// client's own timeout.
    public var storeTimeoutMilliseconds: Int = 5000
    /// How long a request's body may take to arrive after its head, however it trickles: past it
    /// `408 request_too_slow` and the connection closes. Requests are judged when complete; this
    /// bounds how long one can be held open.
    public var requestTimeoutSeconds: Int = 30
    /// Connections the apps' listener holds open at most; past it new ones wait in the listen
    /// backlog. `nil`: half the process's file descriptors left after 256 for the store, the
    /// upstream's connections and files (each proxied request holds a second one upstream).
    public var maxConnections: Int?
    /// Connections one client address (an IPv4 address, an IPv6 /64) holds open at most on each
    /// listener; past it the next is closed at once. Behind `trustedProxies`, requests in progress
    /// per client instead (`429 connection_limit`).
    public var maxConnectionsPerClient: Int = 128
    public var tls: TLS?
    public var deviceCA: DeviceCA?
    /// Addresses (CIDR) of the proxies in front of the gateway — a load balancer, a CDN — whose
    /// word on the client's address is taken: per-source limits then count clients, not the
    /// balancer. Off (every peer is the client) when empty.
    public var trustedProxies: [String] = []
    /// Where the trusted proxies put the client's address: `x-forwarded-for` (the default),
    /// `forwarded` (RFC 7239) or `proxy-protocol` (HAProxy's v1/v2 header, then required from them).
    public var clientAddressFrom: TrustedProxies.Source = .xForwardedFor
    /// Pin failure reports accepted per client address per minute.
    public var pinReportsPerSourcePerMinute: Int = 30
    /// Groups of identical pin reports (host, reason, served pins) kept at most; past it the least
    /// recently reported go first, and the console says the store is full.
    public var maxPinReportGroups: Int = 10_000
    public var ohttp: OHTTP?
    public var legacyEnvelope: LegacyEnvelope?
    public var trustDocument: TrustDocument?
    /// Password login (HTTP Digest and Basic) and user accounts; off when absent.
    public var passwords: Passwords?
    /// App tokens for verified devices, and `app-token` routes; off when absent.
    public var tokens: Tokens?
    /// Firebase App Check tokens on `firebase-app-check` routes; off when absent.
    public var firebaseAppCheck: FirebaseAppCheck?
    /// The gateway as an OAuth Client Attester, and `client-attestation` routes; off when absent.
    public var clientAttestation: ClientAttestation?
    /// Known agents that sign with keys they publish (Web Bot Auth), for `agent` routes and a
    /// `verified` route's `agents`; off when absent. See ``WebBotAuth``.
    public var webBotAuth: WebBotAuth?

    public init(upstream: String) {
        self.upstream = upstream
    }

    /// The trusted proxies, when there are any.
    public func proxies() throws -> TrustedProxies? {
        guard !trustedProxies.isEmpty else { return nil }
        do {
            return try TrustedProxies(trustedProxies, source: clientAddressFrom)
        } catch let error as SignetError {
            throw ConfigurationError.invalid("trustedProxies", "trustedProxies: \(error.reason)")
        }
    }

    /// The name this instance goes by: ``instance``, else the host name (cut to a valid name).
    public var instanceName: String {
        if let instance { return instance }
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "signet" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let kept = String(name.unicodeScalars.filter { Self.instanceCharacters.contains($0) }.prefix(64))
        return kept.isEmpty ? "signet" : kept
    }

    private static let instanceCharacters = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-"
    )

    /// Whether `name` is a valid ``instance``.
    public static func isInstanceName(_ name: String) -> Bool {
        (1...64).contains(name.unicodeScalars.count) && name.unicodeScalars.allSatisfy { instanceCharacters.contains($0) }
    }

    /// The apps' listener's connection limit: ``maxConnections``, or what the file descriptors allow.
    public var connectionLimit: Int {
        maxConnections ?? Self.connectionLimit(fileDescriptors: Self.fileDescriptorLimit)
    }

    /// Half of what is left of `fileDescriptors` after 256 kept for everything else, at least 16.
    static func connectionLimit(fileDescriptors: Int) -> Int {
        max(16, min(1 << 20, (fileDescriptors - 256) / 2))
    }

    /// The admin listener's connection limit: operators, their browsers and a metrics scraper.
    static let adminConnectionLimit = 256

    /// This process's soft limit on open files (`ulimit -n`).
    static var fileDescriptorLimit: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(Int.max) else { return 1 << 20 }
        return Int(clamping: limit.rlim_cur)
    }

    /// The scheme clients sign: the configured one, else that of the gateway's own listener.
    public var signedScheme: String { publicScheme ?? (tls == nil ? "http" : "https") }

    /// The bytes of an RFC 9110 token (a field name).
    static let tokenBytes = Set(Array("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))

    /// Checks what can be checked before starting.
    public func validate() throws {
        _ = try UpstreamOrigin(parsing: upstream)
        for (index, route) in routes.enumerated() {
            do {
                try RouteTable.checkPrefix(route.prefix)
            } catch let error as ConfigurationError {
                throw error.under("routes[\(index)]")
            }
        }
        guard (1...3600).contains(requestTimeoutSeconds) else {
            throw ConfigurationError.invalid("requestTimeoutSeconds", "requestTimeoutSeconds is between 1 and 3600")
        }
        if let instance, !Self.isInstanceName(instance) {
            throw ConfigurationError.invalid(
                "instance",
                "instance is 1 to 64 letters, digits, '.', '_', ':' or '-' (\(instance.prefix(80).debugDescription) is not)"
            )
        }
        for field in policy.coveredFields ?? [] {
            // A field name (RFC 9110 token), not a derived component, and one that reaches the
            // upstream: a signature may not vouch for a field the proxy removes.
            let isToken = !field.isEmpty && field.utf8.allSatisfy { Self.tokenBytes.contains($0) }
            guard isToken, !["signature", "signature-input"].contains(field.lowercased()), !ForwardedFields.isNotDelivered(field.lowercased()) else {
                throw ConfigurationError.invalid(
                    "policy.coveredFields",
                    "policy.coveredFields names header fields that reach the upstream (\(field.prefix(80).debugDescription) is not one)"
                )
            }
        }
        guard (50...60000).contains(storeTimeoutMilliseconds) else {
            throw ConfigurationError.invalid("storeTimeoutMilliseconds", "storeTimeoutMilliseconds is between 50 and 60000")
        }
        if let maxConnections, maxConnections < 1 {
            throw ConfigurationError.invalid("maxConnections", "maxConnections is at least 1")
        }
        guard maxConnectionsPerClient >= 1 else {
            throw ConfigurationError.invalid("maxConnectionsPerClient", "maxConnectionsPerClient is at least 1")
        }
        // Each feature's part, checked by the feature (its folder holds the rules).
        for feature in FeatureRegistry.types { try feature.validate(self) }
        // Each route's mode, checked by the feature that owns it: configured, options consistent.
        try AccessModeRegistry.check(self)
        if let tls {
            try tls.validate(named: "tls")
            guard tls.clientCertificates != true || deviceCA != nil || !(adminCertificates ?? []).isEmpty else {
                throw ConfigurationError.invalid("tls.clientCertificates", "tls.clientCertificates needs a deviceCA or adminCertificates to check them against")
            }
        }
        if let adminListener { try adminListener.validate(besides: listen, development: development) }
        if let authorizationListener {
            let taken = [("listen", listen)] + (adminListener.map { [("adminListener.listen", $0.listen)] } ?? [])
            try authorizationListener.validate(besides: taken, development: development)
        }
        _ = try adminCertificatePins()
        _ = try proxies()
        // A short token falls to guessing, however its attempts are limited per source.
        if let adminToken, adminToken.count < AdminToken.minimumLength, !development {
            throw ConfigurationError.invalid("adminToken", "adminToken has \(adminToken.count) characters; use at least \(AdminToken.minimumLength) (openssl rand -base64 32), or set development: true")
        }
    }

    /// The parsed `adminCertificates`; they need mutual TLS to be presented at all.
    public func adminCertificatePins() throws -> Set<SPKIPin> {
        guard let texts = adminCertificates, !texts.isEmpty else { return [] }
        if adminListener != nil {
            guard adminListener?.tls != nil else {
                throw ConfigurationError.invalid("adminCertificates", "adminCertificates needs adminListener.tls (mutual TLS on the admin listener)")
            }
        } else if tls?.clientCertificates != true {
            throw ConfigurationError.invalid("adminCertificates", "adminCertificates needs tls.clientCertificates")
        }
        var pins: Set<SPKIPin> = []
        for (index, text) in texts.enumerated() {
            do {
                pins.insert(try SPKIPin(parsing: text))
            } catch {
                throw ConfigurationError.invalid("adminCertificates[\(index)]", "adminCertificates[\(index)] is not a sha256/<base64> pin")
            }
        }
        return pins
    }
}

extension GatewayConfiguration {
    /// An https URL, or plain http to this machine only (a local stand-in in tests): what the
    /// gateway fetches from, or sends credentials to, must not be readable or changeable on the way.
    static func checkHTTPS(_ url: String, name: String) throws {
        guard let parsed = URL(string: url), let host = parsed.host,
            parsed.scheme == "https" || (parsed.scheme == "http" && ["127.0.0.1", "localhost", "::1"].contains(host))
        else {
            throw ConfigurationError.invalid("\(name)", "\(name) is https (plain http only on loopback)")
        }
    }

    /// The registration endpoints' part of the file.
    public var registration: RegistrationConfiguration {
        RegistrationConfiguration(
            allowUnattestedDevices: allowUnattestedDevices,
            allowDebugDevices: allowDebugDevices,
            challengeTTLSeconds: challengeTTLSeconds,
            challengesPerSourcePerMinute: challengesPerSourcePerMinute,
            adminToken: adminToken,
            requirePasswordLogin: passwords?.requireForRegistration ?? false
        )
    }
}
