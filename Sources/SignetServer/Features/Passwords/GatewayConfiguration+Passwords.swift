// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// `"passwords": {"realm": "…", "digestAlgorithms": ["SHA-256"], "basic": true, …}`: user
    /// accounts that log in with HTTP Digest (RFC 7616) or Basic (RFC 7617), on `password` and
    /// `password-or-device` routes and before a device registration.
    public struct Passwords: Codable, Sendable, Equatable {
        /// The protection space shown to users; the stored Digest values depend on it.
        public var realm: String
        /// `SHA-256` (the default), `SHA-512-256`, `MD5`: values stored per user and challenges
        /// offered, strongest first; MD5 only on routes with `digestMD5`.
        public var digestAlgorithms: [DigestAlgorithm]?
        /// Accept Basic, over TLS only (true when not given).
        public var basic: Bool?
        /// PBKDF2-HMAC-SHA256 iterations of Basic hashes (600,000 when not given).
        public var basicIterations: Int?
        /// Basic over plain HTTP too. Development only: the password travels in clear.
        public var allowInsecureHTTP: Bool?
        /// Failed logins of one user name before `login_locked` (5 when not given).
        public var maxFailures: Int?
        /// Failed logins from one address before `login_locked` (4 × maxFailures when not given).
        public var maxFailuresPerSource: Int?
        /// How long the failures of a window count, from the first (300 s when not given).
        public var lockoutSeconds: Int?
        /// How long a Digest nonce lasts before the answer says `stale=true` (300 s when not given).
        public var nonceLifetimeSeconds: Int?
        /// How long a verified Basic password is remembered, as a keyed hash in memory (300 s).
        public var basicCacheSeconds: Int?
        /// Device registration needs a password login; the device is bound to the user.
        public var requireForRegistration: Bool?

        public init(realm: String, digestAlgorithms: [DigestAlgorithm]? = nil, basic: Bool? = nil) {
            self.realm = realm
            self.digestAlgorithms = digestAlgorithms
            self.basic = basic
        }

        /// The settings password login runs with, over TLS or not.
        public func loginConfiguration(transportIsSecure: Bool) -> PasswordLoginConfiguration {
            PasswordLoginConfiguration(
                realm: realm,
                digestAlgorithms: digestAlgorithms ?? [.sha256],
                basic: basic ?? true,
                basicIterations: basicIterations ?? PasswordHash.defaultIterations,
                transportIsSecure: transportIsSecure,
                allowInsecureHTTP: allowInsecureHTTP ?? false,
                maxFailures: maxFailures ?? 5,
                maxFailuresPerSource: maxFailuresPerSource,
                lockoutSeconds: lockoutSeconds ?? 300,
                nonceLifetimeSeconds: nonceLifetimeSeconds ?? 300,
                basicCacheSeconds: basicCacheSeconds ?? 300
            )
        }
    }

    /// The password login settings, when `passwords` is configured.
    public var passwordLogin: PasswordLoginConfiguration? {
        passwords?.loginConfiguration(transportIsSecure: signedScheme == "https")
    }

    /// `passwords` itself: what password login checks of its settings.
    func validatePasswords() throws {
        guard let login = passwordLogin else { return }
        do {
            try login.validate()
        } catch let error as SignetError {
            throw ConfigurationError.invalid("passwords", "passwords: \(error.reason)")
        }
    }

    /// A password route needs `passwords`; `digestMD5` needs MD5 among its algorithms; and the
    /// route must offer a client something to answer.
    static func checkPasswordRoute(_ route: Route, _ configuration: GatewayConfiguration, at: String) throws {
        guard let login = configuration.passwordLogin else {
            throw ConfigurationError.invalid("\(at).access", "\(at).access: \(route.access.mode) routes need passwords")
        }
        let options = PasswordsFeature.options(route.access)
        if options.allowMD5, !login.digestAlgorithms.contains(.md5) {
            throw ConfigurationError.invalid("\(at).digestMD5", "\(at).digestMD5: add MD5 to passwords.digestAlgorithms")
        }
        let digests = login.digestAlgorithms.filter { $0 != .md5 || options.allowMD5 }
        let basic = login.basicAllowed && !options.requireAuthInt
        if digests.isEmpty && !basic {
            throw ConfigurationError.invalid("\(at)", "\(at): offers no login (add a Digest algorithm, digestMD5, or Basic over TLS)")
        }
    }
}

extension DigestAlgorithm: ConfigurationChoice {}
