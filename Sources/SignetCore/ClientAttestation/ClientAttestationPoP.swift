// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A Client Attestation PoP JWT (draft-ietf-oauth-attestation-based-client-auth-11 §5.1): the
/// client instance's proof, for one request, that it holds the key its Client Attestation names in
/// `cnf.jwk`, carried in `OAuth-Client-Attestation-PoP`.
///
/// ``init(verifying:key:audience:now:lifetime:clockSkew:)`` makes every check that needs no
/// state: one bounded compact JWS, `typ` `oauth-client-attestation-pop+jwt`, an asymmetric `alg`
/// of the attested key's type, the signature by that key, `aud` naming this server alone, `iat`
/// within the window, `exp` and `nbf` where present, a bounded `jti`. What needs state — the `jti` seen once, the server's `challenge` —
/// is the caller's, with ``jti`` and ``challenge``.
public struct ClientAttestationPoP: Sendable {
    /// The proof's unique id, to be seen once within the proof's lifetime.
    public let jti: String
    public let issued: Date
    /// The server-provided challenge the proof carries, if any.
    public let challenge: String?

    /// Proofs are a few hundred bytes.
    public static let maximumBytes = 8192
    /// Longer ids are refused rather than stored.
    public static let maximumJTIBytes = 128
    /// The `typ` a proof carries (§5.1).
    public static let type = "oauth-client-attestation-pop+jwt"

    /// The `aud` of the PoP by which a key consents to being attested for a device that names it
    /// (Signet's `POST /signet/v1/client-attestations`): the attester `issuer`'s issuing endpoint.
    /// No route's audience may be it, so a PoP meant for a route never serves as that consent.
    public static func consentAudience(issuer: String) -> String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/signet/v1/client-attestations"
    }

    private struct Header: ClientJWSHeader {
        var typ: String?
        var alg: String?
        var crit: [String]?
    }

    private struct Claims: Decodable {
        var aud: Audience?
        var jti: String?
        var iat: Double?
        var exp: Double?
        var nbf: Double?
        var challenge: String?
    }

    /// `aud` as RFC 7519 §4.1.3 allows it: one string or an array of them.
    private struct Audience: Decodable {
        var values: [String]

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let one = try? container.decode(String.self) {
                values = [one]
            } else {
                values = try container.decode([String].self)
            }
        }
    }

    /// Checks `proof`, made by the holder of `key` for the server named `audience`, at `now`.
    ///
    /// - Parameters:
    ///   - proof: The `OAuth-Client-Attestation-PoP` field's value.
    ///   - key: The key the Client Attestation's `cnf.jwk` names.
    ///   - audience: This server's identifier (its issuer or resource URL): `aud` must be it,
    ///     compared as a simple string (RFC 3986 §6.2.1).
    ///   - now: The time the request is judged at.
    ///   - lifetime: How old `iat` may be.
    ///   - clockSkew: How far in the future `iat` may be, and added to `lifetime`.
    /// - Throws: `client_attestation_pop_invalid`, or `client_attestation_pop_stale` for an `iat`
    ///   outside the window.
    public init(
        verifying proof: String,
        key: VerificationKey,
        audience: String,
        now: Date,
        lifetime: TimeInterval,
        clockSkew: TimeInterval
    ) throws {
        guard let jws = CompactJWS(proof, maximumBytes: Self.maximumBytes) else {
            throw Self.invalid("the proof is not a compact JWS of at most \(Self.maximumBytes) bytes")
        }
        let header = try jws.header(Header.self, typ: Self.type, invalid: Self.invalid)
        guard let alg = header.alg, let algorithm = CompactJWS.algorithms[alg], algorithm.keyType == key.type else {
            throw Self.invalid("the proof's alg \(header.alg.map { $0.debugDescription } ?? "(none)") is not an algorithm of the attested \(key.type.rawValue) key")
        }
        guard jws.isSigned(by: key, alg: alg) else {
            throw Self.invalid("the proof's signature does not verify with the attested key (cnf.jwk)")
        }
        let claims = try jws.claims(Claims.self, invalid: Self.invalid)
        // §5.1: a PoP is for one audience — a string, or an array of that one.
        guard let aud = claims.aud?.values, aud == [audience] else {
            throw Self.invalid("the proof's aud is not this server (\(audience)) alone")
        }
        guard let jti = claims.jti, !jti.isEmpty, jti.utf8.count <= Self.maximumJTIBytes else {
            throw Self.invalid("the proof's jti is missing or longer than \(Self.maximumJTIBytes) bytes")
        }
        let issued = try CompactJWS.issued(
            claims.iat,
            now: now,
            lifetime: lifetime,
            clockSkew: clockSkew,
            invalid: Self.invalid,
            stale: .clientAttestationPoPStale
        )
        // RFC 7519 §4.1.4–4.1.5: an `exp` or `nbf` the proof carries holds too.
        for (name, bound) in [("exp", claims.exp), ("nbf", claims.nbf)] {
            guard let bound else { continue }
            guard CompactJWS.isRealTime(bound) else { throw Self.invalid("the proof's \(name) is past any real time") }
            let limit = Date(timeIntervalSince1970: bound)
            let outside = name == "exp" ? now.timeIntervalSince(limit) > clockSkew : limit.timeIntervalSince(now) > clockSkew
            if outside { throw SignetError(.clientAttestationPoPStale, "the proof's \(name) \(Int(bound)) excludes now") }
        }
        self.jti = jti
        self.issued = issued
        self.challenge = claims.challenge
    }

    static func invalid(_ reason: String) -> SignetError { SignetError(.clientAttestationPoPInvalid, reason) }

    /// A proof for `audience`, signed by `sign` — a key that need not leave its keystore.
    ///
    /// - Parameters:
    ///   - alg: The JOSE name of the algorithm (`ES256`, `EdDSA`…) of the attested key.
    ///   - sign: Signs the JWS signing input as JOSE expects (raw `r‖s` for ECDSA).
    ///   - audience: The server's identifier.
    ///   - challenge: The server's latest challenge, when it gave one.
    ///   - now: The proof's `iat`.
    ///   - jti: A fresh unique id; random when `nil`.
    public static func make(
        alg: String,
        sign: ([UInt8]) throws -> [UInt8],
        audience: String,
        challenge: String?,
        now: Date,
        jti: String? = nil
    ) throws -> String {
        guard CompactJWS.algorithms[alg] != nil else { throw SignetError(.algUnsupported, "\(alg) is not a proof algorithm") }
        var header = JSONObjectWriter()
        header.add("typ", type)
        header.add("alg", alg)
        var claims = JSONObjectWriter()
        claims.add("aud", audience)
        claims.add("jti", jti ?? Base64.urlEncode((0..<16).map { _ in UInt8.random(in: .min ... .max) }))
        claims.addRaw("iat", String(Int(now.timeIntervalSince1970.rounded(.down))))
        if let challenge { claims.add("challenge", challenge) }
        return try CompactJWS.make(header: header, payload: claims, sign: sign)
    }

    /// A proof for `audience` signed by a key in memory.
    public static func make(key: SigningKey, audience: String, challenge: String?, now: Date, jti: String? = nil) throws -> String {
        let (alg, sign) = try CompactJWS.signer(for: key)
        return try make(alg: alg, sign: sign, audience: audience, challenge: challenge, now: now, jti: jti)
    }
}
