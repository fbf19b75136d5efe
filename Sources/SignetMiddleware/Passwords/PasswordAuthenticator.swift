// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Hummingbird
import SignetCore
import SignetStore
import Synchronization

/// What password login keeps: accounts, failure windows, the nonce key, and `(nonce, nc)` claims.
public typealias PasswordLoginStore = AccountStore & LoginThrottleStore & ServerSecretStore & NonceStore

/// Checks HTTP Basic (RFC 7617) and Digest (RFC 7616) credentials against the accounts in a store.
///
/// Digest nonces are stateless (`DigestNonce`, keyed by a secret shared through the store) and
/// expire with `stale=true`; each `(nonce, nc)` is claimed once in the store, in any order, only
/// after the response verified. Basic is accepted only over TLS. Failures are counted per user name
/// and per source in the store; past the limit, `login_locked` with `Retry-After`. An unknown user
/// and a wrong password take the same path (a stand-in hash is checked) and give the same answer.
public final class PasswordAuthenticator: Sendable {
    public let configuration: PasswordLoginConfiguration
    let store: any PasswordLoginStore
    let hasher: PasswordHasher
    public let basicCache: BasicLoginCache
    let limits: LoginLimits
    private let nonceKey: SharedServerKey
    /// Checked when the user is unknown, so that the answer takes as long as for a wrong password.
    private let standIn: (basic: PasswordHash?, ha1: String)

    /// The name the Digest nonce key is stored under (`ServerSecretStore`).
    static let nonceSecretName = "digest-nonce-key"
    /// How far a nonce's issue time may be ahead of this instance's clock (another instance's).
    static let clockSkew: TimeInterval = 30

    public init(
        configuration: PasswordLoginConfiguration,
        store: any PasswordLoginStore,
        hasher: PasswordHasher = PasswordHasher()
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.store = store
        self.hasher = hasher
        self.basicCache = BasicLoginCache(lifetime: TimeInterval(configuration.basicCacheSeconds))
        self.limits = LoginLimits(configuration: configuration, store: store)
        self.nonceKey = SharedServerKey(name: Self.nonceSecretName, store: store)
        let random = Nonce.random()
        standIn = (
            configuration.basic ? try PasswordHash(password: random, iterations: configuration.basicIterations) : nil,
            Hex.encode(SHA256.hash(data: Array(random.utf8)))
        )
    }

    /// The account record for `password` as this configuration stores it (PBKDF2 on the hasher's pool).
    public func account(name: String, password: String, now: Date) async throws -> AccountRecord {
        let configuration = self.configuration
        return try await hasher.run {
            try AccountRecord.make(
                name: name,
                password: password,
                realm: configuration.realm,
                algorithms: configuration.digestAlgorithms,
                basicIterations: configuration.basic ? configuration.basicIterations : nil,
                now: now
            )
        }
    }

    // MARK: Challenges

    /// The `WWW-Authenticate` values for a route: a Digest challenge per algorithm offered there
    /// (strongest first, MD5 only where allowed), then Basic where it may be used.
    public func challenges(for route: PasswordRouteOptions, stale: Bool = false, now: Date) async throws -> [String] {
        let nonce = DigestNonce.mint(secret: try await nonceKey.key(), realm: configuration.realm, now: now)
        var values: [String] = []
        for algorithm in configuration.digestAlgorithms where algorithm != .md5 || route.allowMD5 {
            values.append(
                DigestChallenge(
                    realm: configuration.realm,
                    nonce: nonce.value,
                    algorithm: algorithm,
                    qop: route.requireAuthInt ? [.authInt] : [.auth, .authInt],
                    stale: stale
                ).fieldValue
            )
        }
        if configuration.basicAllowed, !route.requireAuthInt {
            values.append(HTTPAuthentication.fieldValue(scheme: "Basic", [.init("realm", configuration.realm), .init("charset", "UTF-8")]))
        }
        return values
    }

    /// `error` with this route's challenges attached.
    func challenging(_ error: SignetError, route: PasswordRouteOptions, stale: Bool = false, now: Date) async -> ChallengedRefusal {
        ChallengedRefusal(error, challenges: (try? await challenges(for: route, stale: stale, now: now)) ?? [])
    }

    // MARK: Authentication

    /// Authenticates the request's `Authorization` field.
    ///
    /// - Parameters:
    ///   - authorization: The request's `Authorization` values (none, or exactly one).
    ///   - method: The request method, which the Digest response covers.
    ///   - target: The request target as the client sent it (before any normalisation).
    ///   - source: The client's address, for the per-source limit.
    ///   - route: What the route accepts.
    ///   - body: The request body, read only for Digest `qop=auth-int`.
    ///   - now: The time nonces and windows are judged at.
    /// - Throws: `SignetError`; 401s carry the route's challenges, 429s a `Retry-After`.
    public func authenticate(
        authorization: [String],
        method: String,
        target: String,
        source: String?,
        route: PasswordRouteOptions,
        body: () async throws -> [UInt8],
        now: Date
    ) async throws -> PasswordLogin {
        guard let value = authorization.first else {
            throw await challenging(SignetError(.credentialsMissing, "log in with a user name and password"), route: route, now: now)
        }
        guard authorization.count == 1 else {
            throw SignetError(.malformedHeader, "the request carries \(authorization.count) Authorization fields")
        }
        let credentials = try HTTPAuthentication(credentials: value)
        if credentials.isScheme("Digest") {
            return try await digest(
                DigestCredentials(credentials),
                method: method,
                target: target,
                source: source,
                route: route,
                body: body,
                now: now
            )
        }
        if credentials.isScheme("Basic"), configuration.basic, !route.requireAuthInt {
            guard configuration.basicAllowed else {
                throw SignetError(.insecureTransport, "Basic sends the password in clear: use HTTPS, or Digest")
            }
            return try await basic(BasicCredentials(credentials), source: source, route: route, now: now)
        }
        throw await challenging(
            SignetError(.credentialsMissing, "\(credentials.scheme) is not accepted here: answer one of the challenges"),
            route: route,
            now: now
        )
    }

    /// Authenticates a Hummingbird request: its `Authorization`, method and target as the client
    /// sent it (``SignetRequestState/receivedTarget`` when routing normalised it), its peer as the
    /// source, and for `auth-int` its body (read up to `maximumBodyBytes` and kept in `request`:
    /// a Hummingbird body can be read once, and whoever handles the request next reads it there).
    ///
    /// The clock is read once the request is complete: for `auth-int` the body is read first, so a
    /// request held open is judged — nonce age, lockout windows — when it ends, not when it began.
    public func authenticate(
        _ request: inout Request,
        context: some SignetRequestContextProtocol,
        route: PasswordRouteOptions,
        maximumBodyBytes: Int,
        clock: () -> Date
    ) async throws -> PasswordLogin {
        let authorization = request.headers[values: .authorization]
        if Self.coversTheBody(authorization) {
            _ = try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body")
        }
        return try await authenticate(&request, context: context, route: route, maximumBodyBytes: maximumBodyBytes, now: clock())
    }

    /// Whether `authorization` is Digest with `qop=auth-int` (whose response covers the body).
    static func coversTheBody(_ authorization: [String]) -> Bool {
        guard authorization.count == 1, let credentials = try? HTTPAuthentication(credentials: authorization[0]),
            credentials.isScheme("Digest")
        else { return false }
        return credentials["qop"]?.lowercased() == "auth-int"
    }

    /// ``authenticate(_:context:route:maximumBodyBytes:clock:)`` at a time taken by the caller:
    /// for `auth-int`, take it after the body is complete.
    public func authenticate(
        _ request: inout Request,
        context: some SignetRequestContextProtocol,
        route: PasswordRouteOptions,
        maximumBodyBytes: Int,
        now: Date
    ) async throws -> PasswordLogin {
        try await authenticate(
            authorization: request.headers[values: .authorization],
            method: request.method.rawValue,
            target: context.signet.receivedTarget ?? request.head.path ?? "/",
            source: context.clientAddress,
            route: route,
            body: { Array(buffer: try await request.collectBody(upTo: maximumBodyBytes, refusing: "a request body")) },
            now: now
        )
    }

    private func digest(
        _ credentials: DigestCredentials,
        method: String,
        target: String,
        source: String?,
        route: PasswordRouteOptions,
        body: () async throws -> [UInt8],
        now: Date
    ) async throws -> PasswordLogin {
        guard configuration.digestAlgorithms.contains(credentials.algorithm), credentials.algorithm != .md5 || route.allowMD5
        else {
            throw await challenging(
                SignetError(.algUnsupported, "Digest with \(credentials.algorithm.rawValue) is not accepted here"),
                route: route,
                now: now
            )
        }
        guard !route.requireAuthInt || credentials.qop == .authInt else {
            throw await challenging(
                SignetError(.digestQopUnsupported, "this route needs qop=auth-int, which covers the body"),
                route: route,
                now: now
            )
        }
        // The response covers the target as sent; a different uri would let it be replayed elsewhere.
        guard credentials.uri == target else {
            throw SignetError(.digestURIMismatch, "the Digest uri is not the request target")
        }
        let nonce: DigestNonce
        do {
            nonce = try DigestNonce(verifying: credentials.nonce, secret: try await nonceKey.key(), realm: configuration.realm)
            guard nonce.issued.timeIntervalSince(now) <= Self.clockSkew else {
                throw SignetError(.digestNonceInvalid, "the nonce was issued in the future")
            }
        } catch let error as SignetError where error.code == .digestNonceInvalid {
            throw await challenging(error, route: route, now: now)
        }
        // A name no account can have (a NUL from `username*=UTF-8''%00`) is not looked up: it is
        // an unknown user, and never a query the store refuses.
        let account =
            credentials.userhash
            ? try await store.account(userhash: credentials.username.lowercased(), algorithm: credentials.algorithm)
            : (try? AccountName.validate(credentials.username)) == nil ? nil : try await store.account(name: credentials.username)
        // A user's failures count under every algorithm's subject however the name was sent: a
        // userhash under SHA-256, then under SHA-512-256, gets one budget, not one per algorithm.
        let userSubjects: [String]
        if credentials.userhash {
            userSubjects =
                account.map { limits.subjects(name: $0.name) }
                ?? [LoginLimits.subject(credentials.algorithm, userhash: credentials.username)]
        } else {
            // The stored name where there is one: another Unicode spelling that finds the same
            // account gets no budget of its own.
            userSubjects = limits.subjects(name: account?.name ?? credentials.username)
        }
        let subjects = limits.subjects(user: userSubjects, source: source)
        let snapshot = try await limits.read(subjects, now: now)
        // An unknown user is checked against a stand-in: the same work, the same answer.
        let secret = account.flatMap { $0.realm == configuration.realm ? $0.digests[credentials.algorithm] : nil }
        let ha1 = secret?.ha1 ?? standIn.ha1
        let expected = DigestResponse.response(
            ha1: ha1,
            nonce: credentials.nonce,
            nc: credentials.nc,
            cnonce: credentials.cnonce,
            qop: credentials.qop,
            method: method,
            uri: credentials.uri,
            body: credentials.qop == .authInt ? try await body() : [],
            algorithm: credentials.algorithm
        )
        let realm = configuration.realm
        let verified = try limits.attempt(subjects, snapshot, now: now) {
            ConstantTime.equals(Array(expected.utf8), Array(credentials.response.utf8)) && secret != nil
                && credentials.realm == realm
        }
        guard verified, let account else {
            try await limits.persistFailure(subjects, now: now)
            throw await challenging(SignetError(.credentialsInvalid, "the user name or password is wrong"), route: route, now: now)
        }
        // Only a right response learns that its nonce is stale (RFC 7616 §3.3): the client retries
        // with the new nonce without asking the user again.
        guard now.timeIntervalSince(nonce.issued) <= TimeInterval(configuration.nonceLifetimeSeconds) else {
            throw await challenging(
                SignetError(.digestNonceStale, "the nonce expired; answer the new challenge"),
                route: route,
                stale: true,
                now: now
            )
        }
        // Each count of a nonce once, per user (one user's claims never spend another's).
        let claimUntil = nonce.issued.addingTimeInterval(TimeInterval(configuration.nonceLifetimeSeconds) + Self.clockSkew)
        guard
            try await store.claim(
                keyID: "digest:" + nonce.value,
                nonce: String(credentials.count) + ":" + account.name,
                until: claimUntil,
                now: now
            )
        else {
            throw await challenging(SignetError(.nonceReplayed, "this nonce count was used already"), route: route, now: now)
        }
        try await limits.succeeded(name: account.name, snapshot)
        return PasswordLogin(user: account.name, scheme: .digest, digest: (credentials, ha1))
    }

    private func basic(
        _ credentials: BasicCredentials,
        source: String?,
        route: PasswordRouteOptions,
        now: Date
    ) async throws -> PasswordLogin {
        // A name no account can have is wrong without a PBKDF2 (nothing to hide), counted at the source.
        let validName = (try? AccountName.validate(credentials.username)) != nil
        let account = validName ? try await store.account(name: credentials.username) : nil
        // Counted under the stored name where there is one (another Unicode spelling of it is the same user).
        let subjects = limits.subjects(
            user: validName ? limits.subjects(name: account?.name ?? credentials.username) : [],
            source: source
        )
        let snapshot = try await limits.read(subjects, now: now)
        // Locked is locked, the right password and a warm cache included: the check comes first.
        try limits.check(subjects, snapshot, now: now)
        let stored = account?.basicHash.flatMap { try? PasswordHash(phc: $0) }
        var verified = false
        var cached = false
        if let account, stored != nil, let text = account.basicHash,
            basicCache.contains(user: account.name, password: credentials.password, storedHash: text, now: now)
        {
            verified = true
            cached = true
        } else if validName {
            // The stand-in when there is no hash to check: an unknown user costs a PBKDF2 too. The
            // limit is read again in the hasher's turn: attempts queued behind a failure see it.
            let hash = stored ?? standIn.basic
            let password = credentials.password
            let limits = self.limits
            verified = try await hasher.run {
                try limits.check(subjects, snapshot, now: now)
                // The stand-in is checked for its time only: it never logs anyone in.
                let matched = (hash?.verify(password) ?? false) && stored != nil
                if !matched { limits.noteFailure(subjects, now: now) }
                return matched
            }
        } else {
            limits.noteFailure(subjects, now: now)
        }
        guard verified, let account, let text = account.basicHash else {
            try await limits.persistFailure(subjects, now: now)
            throw await challenging(SignetError(.credentialsInvalid, "the user name or password is wrong"), route: route, now: now)
        }
        // A cache hit proves what an earlier login proved; it does not clear failures others made since.
        guard !cached else { return PasswordLogin(user: account.name, scheme: .basic, digest: nil) }
        basicCache.insert(user: account.name, password: credentials.password, storedHash: text, now: now)
        try await limits.succeeded(name: account.name, snapshot)
        return PasswordLogin(user: account.name, scheme: .basic, digest: nil)
    }


}
