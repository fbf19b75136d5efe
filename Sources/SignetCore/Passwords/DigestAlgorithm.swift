// SPDX-License-Identifier: Apache-2.0
import Crypto
import _CryptoExtras

/// The hash of an RFC 7616 Digest exchange, named as the `algorithm` parameter names it.
///
/// The `-sess` variants are not offered: they need the server to keep per-session state, and no
/// client needs them when the plain ones are offered.
///
/// - Important: `SHA-512-256` is FIPS 180-4 SHA-512/256 (its own initial values), not SHA-512
///   truncated; RFC 7616 §3.9.2 printed values of the latter (erratum 4897).
public enum DigestAlgorithm: String, Sendable, CaseIterable, Comparable {
    case sha256 = "SHA-256"
    case sha512_256 = "SHA-512-256"
    /// Only for clients that know nothing else, and only where a route opts in.
    case md5 = "MD5"

    /// The algorithm an `algorithm` parameter names (case-insensitively); `nil` for the `-sess`
    /// variants and anything unknown. A missing parameter means MD5 (RFC 7616 §3.3).
    public init?(parameter: String?) {
        guard let parameter else {
            self = .md5
            return
        }
        guard let algorithm = Self.allCases.first(where: { $0.rawValue.lowercased() == parameter.lowercased() }) else {
            return nil
        }
        self = algorithm
    }

    /// `H(data)`: the lowercase hex digest.
    public func hex(_ data: some Sequence<UInt8>) -> String {
        let bytes = Array(data)
        switch self {
        case .sha256: return Hex.encode(SHA256.hash(data: bytes))
        case .sha512_256: return Hex.encode(SHA512256.hash(data: bytes))
        case .md5: return Hex.encode(Insecure.MD5.hash(data: bytes))
        }
    }

    /// `H(text)` of UTF-8 text.
    public func hex(_ text: String) -> String { hex(Array(text.utf8)) }

    /// Hex digits in a `response` of this algorithm.
    public var hexLength: Int { self == .md5 ? 32 : 64 }

    /// The order challenges are offered in: SHA-256 first, then SHA-512-256, MD5 last (RFC 7616
    /// §3.7 puts the preferred first). Clients in the wild decide the rest: curl and browsers
    /// answer the first they support, and curl before 8.8 computes "SHA-512-256" with SHA-256 (a
    /// curl bug), so SHA-512-256 cannot go first; python-requests merges every challenge and
    /// answers the last one, and has no SHA-512-256 at all.
    private var preference: Int {
        switch self {
        case .sha256: 0
        case .sha512_256: 1
        case .md5: 2
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.preference < rhs.preference }
}
