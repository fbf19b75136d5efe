// SPDX-License-Identifier: Apache-2.0
import Crypto

/// RFC 9530 `Content-Digest`: a dictionary of algorithm → digest of the content bytes as sent.
public enum ContentDigest {
    /// The algorithms Signet produces and accepts. RFC 9530 deprecates the others (md5, sha, crc…),
    /// which a verifier ignores.
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha256 = "sha-256"
        case sha512 = "sha-512"

        func digest(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
            switch self {
            case .sha256: Array(Self.digestOf(SHA256.self, bytes))
            case .sha512: Array(Self.digestOf(SHA512.self, bytes))
            }
        }

        private static func digestOf<H: Crypto.HashFunction>(_: H.Type, _ bytes: UnsafeRawBufferPointer) -> H.Digest {
            var hasher = H()
            hasher.update(bufferPointer: bytes)
            return hasher.finalize()
        }

        /// Whether `expected` is the digest of `bytes`, compared in constant time without copying it.
        func matches(_ expected: [UInt8], of bytes: UnsafeRawBufferPointer) -> Bool {
            switch self {
            case .sha256: Self.digestOf(SHA256.self, bytes).withUnsafeBytes { ConstantTime.equals(expected, $0) }
            case .sha512: Self.digestOf(SHA512.self, bytes).withUnsafeBytes { ConstantTime.equals(expected, $0) }
            }
        }
    }

    /// The field value for `body`, e.g. `sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:`.
    public static func fieldValue(for body: [UInt8], algorithm: Algorithm = .sha256) -> String {
        body.withUnsafeBytes { fieldValue(forBytes: $0, algorithm: algorithm) }
    }

    /// ``fieldValue(for:algorithm:)`` of bytes someone else owns.
    public static func fieldValue(forBytes body: UnsafeRawBufferPointer, algorithm: Algorithm = .sha256) -> String {
        "\(algorithm.rawValue)=:\(Base64.encode(algorithm.digest(body))):"
    }

    /// Checks a received field value against the bytes actually received.
    ///
    /// Every member with a supported algorithm must match (a value whose members disagree is
    /// rejected); unsupported members are ignored, but at least one supported member must be there.
    ///
    /// - Throws: `digest_mismatch`, `digest_algorithm_unsupported` or `malformed_header`.
    public static func verify(_ fieldValue: String, body: [UInt8]) throws {
        try body.withUnsafeBytes { try verify(fieldValue, bodyBytes: $0) }
    }

    /// ``verify(_:body:)`` over bytes someone else owns.
    public static func verify(_ fieldValue: String, bodyBytes body: UnsafeRawBufferPointer) throws {
        if let expected = singleSHA256(fieldValue) {
            guard Algorithm.sha256.matches(expected, of: body) else {
                throw SignetError(.digestMismatch, "the sha-256 digest does not match the received body")
            }
            return
        }
        let dictionary = try StructuredFieldParser.parseDictionary(fieldValue)
        var checked = 0
        for entry in dictionary.entries {
            guard let algorithm = Algorithm(rawValue: entry.key) else { continue }
            guard case .item(let item) = entry.member, case .byteSequence(let expected) = item.bareItem else {
                throw SignetError(.malformedHeader, "Content-Digest member \(entry.key) is not a byte sequence")
            }
            guard algorithm.matches(expected, of: body) else {
                throw SignetError(.digestMismatch, "the \(entry.key) digest does not match the received body")
            }
            checked += 1
        }
        guard checked > 0 else {
            throw SignetError(
                .digestAlgorithmUnsupported,
                "Content-Digest has no sha-256 or sha-512 member (has \(dictionary.keys.joined(separator: ", ")))"
            )
        }
    }

    /// The digest of the common value `sha-256=:<base64>:` and nothing else, read without the general
    /// parser (it accepts exactly what the parser would); `nil` for anything else.
    static func singleSHA256(_ fieldValue: String) -> [UInt8]? {
        let prefix = "sha-256=:".utf8
        let utf8 = fieldValue.utf8
        guard utf8.count > prefix.count + 1, utf8.starts(with: prefix), utf8.last == UInt8(ascii: ":") else { return nil }
        // The decoder refuses any byte outside the alphabet, as the parser would.
        var text = fieldValue
        return text.withUTF8 { Base64.decode(UnsafeBufferPointer(rebasing: $0[prefix.count..<($0.count - 1)]), lenient: true) }
    }
}
