// SPDX-License-Identifier: Apache-2.0

/// The one error Signet throws: a stable reason code plus a human explanation.
///
/// Clients branch on ``code`` only. New codes can be added (also by other modules, in an extension
/// of ``Code``) without breaking anyone, unlike an enum. Equality compares codes only.
///
/// - Important: Neither ``reason`` nor ``signatureBase`` ever contains key material. The signature base
///   is data the client sent; it is only shown when a caller asks for debug output.
public struct SignetError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stable, machine-readable reason code such as `signature_invalid`.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
    }

    /// The stable reason code.
    public let code: Code
    /// What went wrong, for humans. Not stable; never parse it.
    public let reason: String
    /// The signature base the verifier built, when it got that far (debug aid).
    public internal(set) var signatureBase: String?

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

extension SignetError.Code {
    // Message and header syntax.
    public static let malformedHeader = Self("malformed_header")
    public static let malformedMessage = Self("malformed_message")
    public static let headerTooLarge = Self("header_too_large")
    public static let bodyTooLarge = Self("body_too_large")
    // Signature selection.
    public static let signatureMissing = Self("signature_missing")
    public static let ambiguousSignature = Self("ambiguous_signature")
    public static let tagMismatch = Self("tag_mismatch")
    // Covered components and parameters.
    public static let componentMissing = Self("component_missing")
    public static let componentNotCovered = Self("component_not_covered")
    public static let componentUnsupported = Self("component_unsupported")
    public static let parameterMissing = Self("parameter_missing")
    // Time window.
    public static let createdTooOld = Self("created_too_old")
    public static let createdInFuture = Self("created_in_future")
    public static let expired = Self("expired")
    // Keys and algorithms.
    public static let unknownKey = Self("unknown_key")
    public static let keyRevoked = Self("key_revoked")
    public static let keyNotYetValid = Self("key_not_yet_valid")
    public static let keyExpired = Self("key_expired")
    public static let invalidKey = Self("invalid_key")
    public static let algMismatch = Self("alg_mismatch")
    public static let algUnsupported = Self("alg_unsupported")
    /// A key does not belong to the certificate, CSR or request it came with.
    public static let keyMismatch = Self("key_mismatch")
    // Content-Digest.
    public static let digestMissing = Self("digest_missing")
    public static let digestNotCovered = Self("digest_not_covered")
    public static let digestMismatch = Self("digest_mismatch")
    public static let digestAlgorithmUnsupported = Self("digest_algorithm_unsupported")
    // The cryptographic check and replay.
    public static let signatureInvalid = Self("signature_invalid")
    public static let nonceMissing = Self("nonce_missing")
    public static let nonceReplayed = Self("nonce_replayed")
    public static let nonceStoreFull = Self("nonce_store_full")
    // Device registration and App Attest (raised by the server and App Attest modules; declared here
    // so every client can match on them from the start).
    public static let counterNotIncreasing = Self("counter_not_increasing")
    public static let challengeUnknown = Self("challenge_unknown")
    public static let challengeExpired = Self("challenge_expired")
    public static let attestationChainInvalid = Self("attestation_chain_invalid")
    public static let attestationNonceMismatch = Self("attestation_nonce_mismatch")
    public static let appIDMismatch = Self("app_id_mismatch")
    public static let environmentMismatch = Self("environment_mismatch")
}
