// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// How users log in with a password: the realm, which Digest algorithms and whether Basic, and how
/// hard failures are limited.
///
/// The gateway builds it from the `passwords` object of its configuration file; an app that embeds
/// ``PasswordLoginMiddleware`` builds one itself.
public struct PasswordLoginConfiguration: Sendable {
    /// The protection space (RFC 9110 §11.5); the Digest values stored for a user depend on it.
    public var realm: String
    /// Digest algorithms whose values are stored for each user and offered, strongest first. MD5 is
    /// offered only on routes that opt in (``PasswordRouteOptions/allowMD5``).
    public var digestAlgorithms: [DigestAlgorithm]
    /// Whether Basic is accepted (then a PBKDF2 hash is stored for each user).
    public var basic: Bool
    /// PBKDF2-HMAC-SHA256 iterations of new Basic hashes.
    public var basicIterations: Int
    /// Whether the transport is TLS (also behind a TLS-terminating proxy): Basic is offered and
    /// accepted only then.
    public var transportIsSecure: Bool
    /// Offer and accept Basic over plain HTTP. For development only: the password travels in clear.
    public var allowInsecureHTTP: Bool
    /// Failures of one user name within ``lockoutSeconds`` before `login_locked`.
    public var maxFailures: Int
    /// Failures from one source address within ``lockoutSeconds`` before `login_locked`.
    public var maxFailuresPerSource: Int
    /// How long a failure window lasts, from its first failure.
    public var lockoutSeconds: Int
    /// How long a Digest nonce is good for; after that the answer says `stale=true`.
    public var nonceLifetimeSeconds: Int
    /// How long a Basic password that verified is remembered (as a keyed hash, in memory), so that
    /// a client sending Basic on every request does not cost a PBKDF2 each time; 0 turns it off.
    public var basicCacheSeconds: Int

    public init(
        realm: String,
        digestAlgorithms: [DigestAlgorithm] = [.sha256],
        basic: Bool = true,
        basicIterations: Int = PasswordHash.defaultIterations,
        transportIsSecure: Bool,
        allowInsecureHTTP: Bool = false,
        maxFailures: Int = 5,
        maxFailuresPerSource: Int? = nil,
        lockoutSeconds: Int = 300,
        nonceLifetimeSeconds: Int = 300,
        basicCacheSeconds: Int = 300
    ) {
        self.realm = realm
        self.digestAlgorithms = digestAlgorithms.sorted()
        self.basic = basic
        self.basicIterations = basicIterations
        self.transportIsSecure = transportIsSecure
        self.allowInsecureHTTP = allowInsecureHTTP
        self.maxFailures = maxFailures
        self.maxFailuresPerSource = maxFailuresPerSource ?? maxFailures * 4
        self.lockoutSeconds = lockoutSeconds
        self.nonceLifetimeSeconds = nonceLifetimeSeconds
        self.basicCacheSeconds = basicCacheSeconds
    }

    /// Whether Basic may be used on this transport.
    public var basicAllowed: Bool { basic && (transportIsSecure || allowInsecureHTTP) }

    /// Checks the limits.
    ///
    /// - Throws: `malformed_message` naming the setting.
    public func validate() throws {
        guard !realm.isEmpty, realm.utf8.count <= 256, !realm.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { throw SignetError(.malformedMessage, "passwords.realm: 1 to 256 bytes, no control characters") }
        guard !digestAlgorithms.isEmpty || basic else {
            throw SignetError(.malformedMessage, "passwords: enable Digest algorithms, Basic, or both")
        }
        guard Set(digestAlgorithms).count == digestAlgorithms.count else {
            throw SignetError(.malformedMessage, "passwords.digestAlgorithms: each at most once")
        }
        guard (PasswordHash.minimumIterations...PasswordHash.maximumIterations).contains(basicIterations) else {
            throw SignetError(
                .malformedMessage,
                "passwords.basicIterations: \(PasswordHash.minimumIterations) to \(PasswordHash.maximumIterations)"
            )
        }
        guard maxFailures > 0, maxFailuresPerSource > 0, lockoutSeconds > 0 else {
            throw SignetError(.malformedMessage, "passwords: maxFailures, maxFailuresPerSource and lockoutSeconds are positive")
        }
        guard (1...86_400).contains(nonceLifetimeSeconds), (0...86_400).contains(basicCacheSeconds) else {
            throw SignetError(.malformedMessage, "passwords: nonceLifetimeSeconds is 1 to 86400, basicCacheSeconds 0 to 86400")
        }
    }
}

/// What one route asks of a password login.
public struct PasswordRouteOptions: Sendable, Hashable {
    /// Offer and accept Digest with MD5 here (it must be among the configured algorithms too).
    public var allowMD5: Bool
    /// Accept only Digest `qop=auth-int`, whose response covers the body too (and no Basic).
    public var requireAuthInt: Bool
    /// Forward the client's `Authorization` field upstream; by default it is removed once used.
    public var keepAuthorization: Bool

    public init(allowMD5: Bool = false, requireAuthInt: Bool = false, keepAuthorization: Bool = false) {
        self.allowMD5 = allowMD5
        self.requireAuthInt = requireAuthInt
        self.keepAuthorization = keepAuthorization
    }
}
