// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A compact JWS (RFC 7515 §7.1) a client made with its own key — a DPoP proof, a client
/// attestation's proof of possession — split, decoded and bounded, its signature checked by the
/// asymmetric algorithm its header names. What the header and claims must say is the caller's.
struct CompactJWS {
    /// The decoded protected header, JSON.
    let header: [UInt8]
    /// The decoded payload, JSON.
    let payload: [UInt8]
    let signature: [UInt8]
    /// `base64url(header) ‖ "." ‖ base64url(payload)`, as signed.
    let signingInput: [UInt8]

    /// The JWS algorithms a client's key may sign with, by their JOSE names: the asymmetric ones
    /// Signet verifies. `Ed25519` is RFC 9864's fully-specified name for `EdDSA` over Ed25519.
    static let algorithms: [String: any SignatureAlgorithm] = [
        "ES256": ECDSAP256SHA256(),
        "ES384": ECDSAP384SHA384(),
        "EdDSA": Ed25519Algorithm(),
        "Ed25519": Ed25519Algorithm(),
        "RS256": RSAPKCS1v15SHA256(),
    ]

    /// The algorithms as a challenge's `algs` parameter lists them, space-separated.
    static var algorithmNames: String { algorithms.keys.sorted().joined(separator: " ") }

    /// `text` split into its three parts; `nil` when it is longer than `maximumBytes`, not three
    /// base64url parts, or has an empty signature.
    init?(_ text: String, maximumBytes: Int) {
        guard text.utf8.count <= maximumBytes else { return nil }
        // Split by bytes: a JWS is ASCII, and splitting the String walks it by Character (grapheme
        // breaking), the largest cost of reading a token of a few hundred bytes.
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64.urlDecode(String(Substring(parts[0]))),
            let payload = Base64.urlDecode(String(Substring(parts[1]))),
            let signature = Base64.urlDecode(String(Substring(parts[2]))), !signature.isEmpty
        else { return nil }
        self.header = header
        self.payload = payload
        self.signature = signature
        self.signingInput = Array(text.utf8.prefix(parts[0].count + 1 + parts[1].count))
    }

    /// Whether the signature verifies with `key` under `alg`, which must be one of ``algorithms``
    /// and of `key`'s type.
    func isSigned(by key: VerificationKey, alg: String) -> Bool {
        guard let algorithm = Self.algorithms[alg], algorithm.keyType == key.type else { return false }
        return (try? algorithm.verify(signature, over: signingInput, with: key)) != nil
    }

    /// A JWS over `header` and `payload`, signed by `sign`.
    static func make(header: JSONObjectWriter, payload: JSONObjectWriter, sign: ([UInt8]) throws -> [UInt8]) rethrows -> String {
        let input = Base64.urlEncode(header.bytes) + "." + Base64.urlEncode(payload.bytes)
        return input + "." + Base64.urlEncode(try sign(Array(input.utf8)))
    }

    /// The JOSE algorithm a key in memory signs a client's JWS with, and how.
    static func signer(for key: SigningKey) throws -> (alg: String, sign: ([UInt8]) throws -> [UInt8]) {
        let (alg, algorithm): (String, any SignatureAlgorithm) =
            switch key.type {
            case .p256: ("ES256", ECDSAP256SHA256())
            case .p384: ("ES384", ECDSAP384SHA384())
            case .ed25519: ("EdDSA", Ed25519Algorithm())
            case .rsa: ("RS256", RSAPKCS1v15SHA256())
            case .symmetric: throw SignetError(.algUnsupported, "a proof of possession needs an asymmetric key")
            }
        return (alg, { try algorithm.sign($0, with: key) })
    }
}

/// The members of a client's JWS header that every proof is checked for.
protocol ClientJWSHeader: Decodable {
    var typ: String? { get }
    var alg: String? { get }
    var crit: [String]? { get }
}

extension CompactJWS {
    /// The header as `Header`: a JSON object of its members, no `crit` (RFC 7515 §4.1.11), and the
    /// JWT type `typ` (compared case-insensitively, RFC 7515 §4.1.9); `invalid` says why not.
    func header<Header: ClientJWSHeader>(
        _: Header.Type,
        typ: String,
        invalid: (String) -> SignetError
    ) throws -> Header {
        guard let decoded = try? JSONDecoder().decode(Header.self, from: Data(header)) else {
            throw invalid("the proof's header is not a JSON object of the expected members")
        }
        guard decoded.crit == nil else { throw invalid("the proof's header has critical extensions") }
        guard decoded.typ?.lowercased() == typ else {
            throw invalid("the proof's typ is \(decoded.typ.map { $0.debugDescription } ?? "missing"), not \(typ)")
        }
        return decoded
    }

    /// The payload as `Claims`, a JSON object of its members; `invalid` says why not.
    func claims<Claims: Decodable>(_: Claims.Type, invalid: (String) -> SignetError) throws -> Claims {
        guard let decoded = try? JSONDecoder().decode(Claims.self, from: Data(payload)) else {
            throw invalid("the proof's claims are not a JSON object of the expected members")
        }
        return decoded
    }

    /// Whether a NumericDate (RFC 7519 §2) is one a clock can show: finite, and short of `1e11`
    /// seconds. A value past that (`1e300`) must never reach an integer conversion, which would
    /// stop the process.
    static func isRealTime(_ seconds: Double) -> Bool { seconds.isFinite && abs(seconds) < 1e11 }

    /// When a proof was made: its `iat`, no later than `clockSkew` after `now` and no earlier than
    /// `lifetime` and `clockSkew` before it.
    ///
    /// - Throws: `invalid`'s error without a real `iat`; `stale` outside the window.
    static func issued(
        _ iat: Double?,
        now: Date,
        lifetime: TimeInterval,
        clockSkew: TimeInterval,
        invalid: (String) -> SignetError,
        stale: SignetError.Code
    ) throws -> Date {
        guard let iat, isRealTime(iat) else { throw invalid("the proof has no iat, or one past any real time") }
        let issued = Date(timeIntervalSince1970: iat)
        guard issued.timeIntervalSince(now) <= clockSkew, now.timeIntervalSince(issued) <= lifetime + clockSkew else {
            throw SignetError(stale, "the proof was made at \(Int(iat)), outside the \(Int(lifetime)) s window around now")
        }
        return issued
    }
}

extension JWK {
    /// Whether the key carries private members (`d`, RSA's primes, a symmetric `k`): a client that
    /// sends one has sent its secret, and the key is refused.
    public var hasPrivateMembers: Bool {
        ![d, p, q, dp, dq, qi, k].allSatisfy { $0 == nil }
    }
}
