// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Crypto
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1
import SignetCore
import SignetMiddleware

/// Checks Firebase App Check tokens as Firebase documents for backends without its Admin SDK:
/// an RS256 JWT with `typ: JWT` and a `kid` of the App Check JWKS, issuer
/// `https://firebaseappcheck.googleapis.com/<project number>`, audience containing
/// `projects/<project number>`, not expired, and (when configured) one of the accepted app ids.
///
/// The JWKS is fetched on first use and cached as its `Cache-Control` says but never longer than
/// six hours (Firebase: "must not be cached for longer than six hours"); a token naming a key not
/// in the cached set fetches again, at most once a minute, so a forged `kid` cannot make the
/// gateway hammer Google.
///
/// On a route that consumes tokens, each token is accepted once: Firebase's replay protection for
/// limited-use tokens. Firebase does it at Google (`verifyAppCheckToken`, with a service account);
/// here the token is claimed in the gateway's nonce store, so every instance sharing the store sees
/// it used, and no call leaves the gateway. App Check tokens carry no id of their own, so the claim
/// is the SHA-256 of the decoded RSA signature: one token, however its base64 is spelt.
public struct FirebaseAppCheckVerifier: ExternalTokenVerifier {
    public static let googleJWKS = "https://firebaseappcheck.googleapis.com/v1/jwks"
    /// Firebase's ceiling on caching the JWKS.
    static let maximumCacheSeconds: TimeInterval = 6 * 3600

    public let projectNumber: String
    public let appIDs: Set<String>?
    let keys: FirebaseJWKSCache
    let nonces: (any NonceStore)?
    /// Where consumed tokens are claimed, apart from the key ids of signatures.
    static let claimNamespace = ":firebase-app-check"

    /// - Parameters:
    ///   - projectNumber: The Firebase project number.
    ///   - appIDs: Accepted app ids (`sub`); any when `nil`.
    ///   - jwksURL: Where the keys are.
    ///   - client: The HTTP client the keys are fetched with.
    ///   - logger: Where failed fetches are logged.
    ///   - refetchSeconds: The least time between two fetches for an unknown `kid`.
    ///   - nonces: Where consumed tokens are claimed; without it, a route that consumes refuses every token.
    public init(
        projectNumber: String,
        appIDs: Set<String>?,
        jwksURL: String = Self.googleJWKS,
        client: HTTPClient,
        logger: Logger,
        refetchSeconds: TimeInterval = 60,
        nonces: (any NonceStore)? = nil
    ) {
        self.projectNumber = projectNumber
        self.appIDs = appIDs
        self.keys = FirebaseJWKSCache(url: jwksURL, client: client, logger: logger, refetchSeconds: refetchSeconds)
        self.nonces = nonces
    }

    /// How many times the JWKS was fetched (for tests and metrics).
    public var fetches: Int {
        get async { await keys.fetches }
    }

    public func identity(for token: String, now: Date, consume: Bool = false) async throws -> SignetIdentity {
        let header = try CompactJWTHeader(token)
        guard header.alg == "RS256", header.typ?.uppercased() == "JWT", let kid = header.kid else {
            throw SignetError(.tokenInvalid, "an App Check token is RS256 with typ JWT and a kid")
        }
        let collection = try await keys.collection(holding: kid, now: now)
        let claims: FirebaseAppCheckClaims
        do {
            claims = try await collection.verify(token, as: FirebaseAppCheckClaims.self)
        } catch {
            throw SignetError(.tokenInvalid, "the App Check token's signature or claims do not verify")
        }
        guard claims.iss == "https://firebaseappcheck.googleapis.com/\(projectNumber)" else {
            throw SignetError(.tokenInvalid, "the App Check token is from another project's issuer")
        }
        guard claims.aud.value.contains("projects/\(projectNumber)") else {
            throw SignetError(.tokenAudienceMismatch, "the App Check token is not for project \(projectNumber)")
        }
        guard now < claims.exp.value else {
            throw SignetError(.tokenExpired, "the App Check token has expired")
        }
        if let appIDs, !appIDs.contains(claims.sub.value) {
            throw SignetError(.tokenInvalid, "the App Check token is for an app this gateway does not accept")
        }
        // Claimed only now that it verified: a forged token cannot use up a real one's claim.
        if consume {
            guard let nonces else { throw SignetError(.storeUnavailable, "no store to record used App Check tokens in") }
            guard let signature = token.split(separator: ".", omittingEmptySubsequences: false).last.flatMap({ Base64.urlDecode(String($0)) }) else {
                throw SignetError(.tokenInvalid, "the App Check token's signature is not base64url")
            }
            let claimed = try await nonces.claim(
                keyID: Self.claimNamespace,
                nonce: Hex.encode(SHA256.hash(data: signature)),
                until: claims.exp.value,
                now: now
            )
            guard claimed else { throw SignetError(.tokenReplayed, "this App Check token was used before") }
        }
        return SignetIdentity(
            deviceID: nil,
            keyID: "",
            trustLevel: .deviceKey,
            algorithm: "firebase-app-check",
            nonce: claims.jti,
            created: claims.iat?.value,
            appID: claims.sub.value
        )
    }
}

/// What an App Check token says; checked by ``FirebaseAppCheckVerifier`` after jwt-kit checked the
/// signature.
struct FirebaseAppCheckClaims: JWTPayload {
    var iss: String
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim?
    var jti: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The App Check JWKS, fetched when needed and shared by concurrent requests.
actor FirebaseJWKSCache {
    let url: String
    let client: HTTPClient
    let logger: Logger
    private var collection: JWTKeyCollection?
    private var kids: Set<String> = []
    private var expires = Date.distantPast
    private var lastFetch = Date.distantPast
    private var inFlight: Task<Void, any Error>?
    private(set) var fetches = 0
    let refetchSeconds: TimeInterval

    init(url: String, client: HTTPClient, logger: Logger, refetchSeconds: TimeInterval) {
        self.url = url
        self.client = client
        self.logger = logger
        self.refetchSeconds = refetchSeconds
    }

    /// The key collection, fetched again when the cached one expired, or when it lacks `kid` and
    /// the last fetch is `refetchSeconds` old.
    func collection(holding kid: String, now: Date) async throws -> JWTKeyCollection {
        let stale = now >= expires
        let unknownKid = !kids.contains(kid) && now.timeIntervalSince(lastFetch) >= refetchSeconds
        if collection == nil || stale || unknownKid {
            await refresh(now: now)
        }
        guard let collection, now < expires else {
            throw SignetError(.tokenKeysUnavailable, "the App Check keys cannot be fetched")
        }
        guard kids.contains(kid) else {
            throw SignetError(.tokenInvalid, "the App Check token names a key Firebase does not publish")
        }
        return collection
    }

    /// One fetch at a time; concurrent callers wait for it. A failure keeps the cached set while it
    /// has not expired, and is logged.
    private func refresh(now: Date) async {
        if let inFlight {
            _ = try? await inFlight.value
            return
        }
        let task = Task { try await fetch(now: now) }
        inFlight = task
        defer { inFlight = nil }
        do {
            try await task.value
        } catch {
            logger.warning("cannot fetch the App Check JWKS", metadata: ["url": "\(url)", "error": "\(error)"])
        }
    }

    private func fetch(now: Date) async throws {
        lastFetch = now
        fetches += 1
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 256 * 1024)
        guard response.status == .ok else {
            throw SignetError(.tokenKeysUnavailable, "the JWKS answered \(response.status.code)")
        }
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(body.readableBytesView))
        let keys = JWTKeyCollection()
        var kids: Set<String> = []
        // RSA keys with a kid; one jwt-kit refuses (too short, malformed) is left out, not the set.
        for jwk in jwks.keys where jwk.keyType == .rsa {
            guard let kid = jwk.keyIdentifier, (try? await keys.add(jwk: jwk)) != nil else { continue }
            kids.insert(kid.string)
        }
        // At most six hours; at least a minute, so `no-cache` does not mean a fetch per request.
        var lifetime = FirebaseAppCheckVerifier.maximumCacheSeconds
        if let maxAge = Self.maxAge(response.headers["Cache-Control"]) {
            lifetime = max(60, min(lifetime, maxAge))
        }
        self.collection = keys
        self.kids = kids
        self.expires = now.addingTimeInterval(lifetime)
    }

    /// `max-age` of a `Cache-Control` value; `no-store`/`no-cache` count as 0.
    static func maxAge(_ values: [String]) -> TimeInterval? {
        for directive in FieldList.members(values) {
            let parts = directive.lowercased().split(separator: "=", maxSplits: 1)
            switch parts.first {
            case "max-age":
                if parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))), seconds >= 0 {
                    return TimeInterval(seconds)
                }
            case "no-store", "no-cache": return 0
            default: continue
            }
        }
        return nil
    }
}
