// SPDX-License-Identifier: Apache-2.0

/// The one error Signet throws: a stable reason code plus a human explanation.
///
/// Clients branch on ``code`` only. New codes can be added (also by other modules, in an extension
/// of ``Code``) without breaking anyone, unlike an enum. Equality compares codes only.
///
/// - Important: Neither ``reason`` nor ``signatureBase`` ever contains key material. The signature base
///   is data the client sent; it is only shown when a caller asks for debug output.
public struct SignetError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stable, machine-readable reason code such as `signature_invalid`, with the HTTP status a
    /// server answers it with. Every code is declared once, in the catalogue (`SignetError+Codes.swift`).
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        /// The HTTP status a server answers with (RFC 9457 problem+json carries the code).
        public let httpStatus: Int

        init(_ rawValue: String, _ httpStatus: Int) {
            self.rawValue = rawValue
            self.httpStatus = httpStatus
        }

        /// The catalogued code with this name; `nil` for a name Signet does not define.
        public init?(rawValue: String) {
            guard let code = Self.catalogue[rawValue] else { return nil }
            self = code
        }

        public var description: String { rawValue }
        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    }

    /// The stable reason code.
    public let code: Code
    /// What went wrong, for humans. Not stable; never parse it.
    public let reason: String
    /// The signature base the verifier built, when it got that far (debug aid).
    public internal(set) var signatureBase: String?
    /// Seconds after which the client may try again (`Retry-After`), for limits that lift.
    public var retryAfterSeconds: Int?
    /// On `alg_mismatch`: the key the signature named and the algorithm its record is for, which
    /// a server may ask for in `Accept-Signature` (the algorithm is the key record's, never the
    /// message's).
    public var keyAlgorithm: (keyID: String, algorithm: String)?

    public init(_ code: Code, _ reason: String, signatureBase: String? = nil) {
        self.code = code
        self.reason = reason
        self.signatureBase = signatureBase
    }

    public static func == (lhs: SignetError, rhs: SignetError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "\(code.rawValue): \(reason)" }

    public var debugDescription: String {
        guard let base = signatureBase else { return description }
        return "\(description)\nsignature base:\n\(base)"
    }

    func withSignatureBase(_ base: String) -> SignetError {
        var copy = self
        copy.signatureBase = base
        return copy
    }
}
