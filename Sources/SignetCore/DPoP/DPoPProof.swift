// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation

/// A DPoP proof (RFC 9449): a JWT the client signs with its own key for one request, carried in
/// the `DPoP` field, proving it holds the key an access token is bound to (`cnf.jkt`).
///
/// ``init(verifying:method:targetURI:accessToken:now:lifetime:clockSkew:)`` makes every check of
/// RFC 9449 §4.3 that needs no state: one bounded compact JWS, `typ` `dpop+jwt`, an asymmetric
/// `alg` that matches the embedded public `jwk`, the signature, `htm` and `htu` against the request,
/// `iat` within the window, and `ath` against the access token. What needs state — the `jti` seen
/// once, the server's `nonce` — is the caller's, with ``jti`` and ``nonce``.
public struct DPoPProof: Sendable {
    /// The RFC 7638 thumbprint of the proof's public key: what a bound token's `cnf.jkt` names.
    public let thumbprint: String
    /// The proof's public key, as parsed and checked (no small-order Ed25519 point, a point on the curve).
    public let key: VerificationKey
    /// The proof's unique id, to be seen once within the proof's lifetime.
    public let jti: String
    public let issued: Date
    /// The server-provided nonce the proof carries, if any.
    public let nonce: String?

    /// Proofs are a few hundred bytes (an RSA key makes them about 1 KiB).
    public static let maximumBytes = 8192
    /// Longer ids are refused rather than stored.
    public static let maximumJTIBytes = 128
    /// The `typ` a proof carries (RFC 9449 §4.2).
    public static let type = "dpop+jwt"

    /// The JWS algorithms a proof may use, by their JOSE names: the asymmetric ones Signet verifies.
    /// `Ed25519` is RFC 9864's fully-specified name for `EdDSA` over Ed25519.
    public static var algorithms: [String: any SignatureAlgorithm] { CompactJWS.algorithms }

    /// The algorithms as a `WWW-Authenticate: DPoP algs="…"` parameter lists them.
    public static var algorithmNames: String { CompactJWS.algorithmNames }

    private struct Header: ClientJWSHeader {
        var typ: String?
        var alg: String?
        var jwk: JWK?
        var crit: [String]?
    }

    private struct Claims: Decodable {
        var jti: String?
        var htm: String?
        var htu: String?
        var iat: Double?
        var ath: String?
        var nonce: String?
    }

    /// Checks `proof` for a request of `method` to `targetURI`, made at `now`.
    ///
    /// - Parameters:
    ///   - proof: The `DPoP` field's value.
    ///   - method: The request's method, as sent (`htm` is compared case-sensitively, RFC 9110 §9.1).
    ///   - targetURI: The request's URI as the server knows it (its public scheme and authority);
    ///     compared with `htu` after RFC 3986 §6.2.2–6.2.3 normalisation, query and fragment ignored.
    ///   - accessToken: The access token presented with the proof: `ath` must be its SHA-256.
    ///   - lifetime: How old `iat` may be.
    ///   - now: The time the request is judged at.
    ///   - clockSkew: How far in the future `iat` may be.
    /// - Throws: `dpop_proof_invalid`, or `dpop_proof_stale` for an `iat` outside the window.
    public init(
        verifying proof: String,
        method: String,
        targetURI: String,
        accessToken: String?,
        now: Date,
        lifetime: TimeInterval,
        clockSkew: TimeInterval
    ) throws {
        guard let jws = CompactJWS(proof, maximumBytes: Self.maximumBytes) else {
            throw Self.invalid("the proof is not a compact JWS of at most \(Self.maximumBytes) bytes")
        }
        let header = try jws.header(Header.self, typ: Self.type, invalid: Self.invalid)
        guard let alg = header.alg, let algorithm = Self.algorithms[alg] else {
            throw Self.invalid("the proof's alg \(header.alg.map { $0.debugDescription } ?? "(none)") is not one of \(Self.algorithmNames)")
        }
        guard let jwk = header.jwk else { throw Self.invalid("the proof's header carries no jwk") }
        // RFC 9449 §4.3 (7): the key must be public; a private member means the client sent its secret.
        guard !jwk.hasPrivateMembers else { throw Self.invalid("the proof's jwk holds private key material") }
        let key: VerificationKey
        do {
            key = try VerificationKey(jwk: jwk)
        } catch {
            throw Self.invalid("the proof's jwk is not a usable public key")
        }
        guard key.type == algorithm.keyType else {
            throw Self.invalid("the proof's jwk is a \(key.type.rawValue) key, which \(alg) does not use")
        }
        guard jws.isSigned(by: key, alg: alg) else { throw Self.invalid("the proof's signature does not verify with its jwk") }
        let claims = try jws.claims(Claims.self, invalid: Self.invalid)
        guard let jti = claims.jti, !jti.isEmpty, jti.utf8.count <= Self.maximumJTIBytes else {
            throw Self.invalid("the proof's jti is missing or longer than \(Self.maximumJTIBytes) bytes")
        }
        guard let htm = claims.htm, htm == method else {
            throw Self.invalid("the proof's htm \(claims.htm.map { $0.debugDescription } ?? "(none)") is not the request's method \(method)")
        }
        guard let htu = claims.htu, let proofURI = Self.normalizedURI(htu), proofURI == Self.normalizedURI(targetURI) else {
            throw Self.invalid("the proof's htu \(claims.htu.map { $0.debugDescription } ?? "(none)") is not this request's URI \(targetURI)")
        }
        let issued = try CompactJWS.issued(
            claims.iat,
            now: now,
            lifetime: lifetime,
            clockSkew: clockSkew,
            invalid: Self.invalid,
            stale: .dpopProofStale
        )
        if let accessToken {
            let expected = Base64.urlEncode(SHA256.hash(data: Array(accessToken.utf8)))
            guard let ath = claims.ath, ConstantTime.equals(Array(ath.utf8), Array(expected.utf8)) else {
                throw Self.invalid("the proof's ath is not the hash of the access token it came with")
            }
        }
        self.thumbprint = try key.jwk.thumbprint
        self.key = key
        self.jti = jti
        self.issued = issued
        self.nonce = claims.nonce
    }

    static func invalid(_ reason: String) -> SignetError { SignetError(.dpopProofInvalid, reason) }

    /// `uri` as RFC 9449 compares `htu`: scheme and host lowercased, the scheme's default port
    /// dropped, an empty path as `/`, percent-encoded unreserved bytes decoded and the rest in
    /// upper case (RFC 3986 §6.2.2–6.2.3), query and fragment removed. `nil` for anything but an
    /// absolute `http` or `https` URI with an authority.
    public static func normalizedURI(_ uri: String) -> String? {
        guard uri.utf8.count <= 8192, let schemeEnd = uri.range(of: "://") else { return nil }
        let scheme = uri[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var rest = uri[schemeEnd.upperBound...]
        if let cut = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<cut] }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash].lowercased()
        guard RequestTarget.isAuthority(authority) else { return nil }
        let defaultPort = scheme == "https" ? ":443" : ":80"
        if authority.hasSuffix(defaultPort) { authority.removeLast(defaultPort.count) }
        guard let path = normalizedPath(rest[slash...]) else { return nil }
        return scheme + "://" + authority + (path.isEmpty ? "/" : path)
    }

    private static func normalizedPath(_ path: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = Array(path.utf8)[...]
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard bytes.count >= 2, let high = FormURLEncoding.hexValue(bytes.popFirst()!), let low = FormURLEncoding.hexValue(bytes.popFirst()!) else { return nil }
            let decoded = high << 4 | low
            if isUnreserved(decoded) {
                out.append(decoded)
            } else {
                out += Array(String(format: "%%%02X", decoded).utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}
