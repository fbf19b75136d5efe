// SPDX-License-Identifier: Apache-2.0
import Crypto

/// The hash functions the seed articles print digests with, as lowercase hex.
///
/// - Important: MD5 and SHA-1 are here for compatibility with existing data only; never sign with them.
public enum HashFunction: String, Sendable, CaseIterable {
    case md5, sha1, sha256, sha384, sha512

    public func digest(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        let data = Array(bytes)
        switch self {
        case .md5: return Array(Insecure.MD5.hash(data: data))
        case .sha1: return Array(Insecure.SHA1.hash(data: data))
        case .sha256: return Array(SHA256.hash(data: data))
        case .sha384: return Array(SHA384.hash(data: data))
        case .sha512: return Array(SHA512.hash(data: data))
        }
    }

    /// The digest as lowercase hex, as the seed articles print it.
    public func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.encode(digest(bytes)) }
}

/// HMAC-SHA256 as lowercase hex, the seeds' MAC format.
public enum HMACHex {
    public static func sha256(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> String {
        Hex.encode(HMAC<SHA256>.authenticationCode(for: Array(message), using: SymmetricKey(data: Array(key))))
    }
}
