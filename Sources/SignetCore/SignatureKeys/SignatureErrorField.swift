// SPDX-License-Identifier: Apache-2.0

/// The `Signature-Error` response field (draft-hardt-httpbis-signature-key-08 §5): a Dictionary whose
/// `error` token says why a signature was refused, in words any signer of the draft reads, beside
/// Signet's own reason code in the problem body; `invalid_input` adds the components required.
public struct SignatureErrorField: Sendable, Hashable {
    public static let fieldName = "Signature-Error"
    /// The draft's error codes.
    public static let codes: Set<String> = [
        "unsupported_algorithm", "unsupported_scheme", "cache_miss", "invalid_signature", "invalid_input",
        "invalid_request", "invalid_key", "unknown_key", "issuer_missing", "issuer_mismatch", "invalid_jwt", "expired_jwt",
    ]

    public var error: String
    /// For `invalid_input`: the components a signature must cover.
    public var requiredInput: [String]?

    /// The draft's code for a refusal with Signet's `code`; `nil` where none applies — a policy
    /// refusal (403) among them, which §5 says carries no `Signature-Error`.
    public init?(for code: SignetError.Code, requiredInput: [String]? = nil) {
        let error: String? =
            switch code {
            case .signatureInvalid, .digestMismatch: "invalid_signature"
            case .algUnsupported: "unsupported_algorithm"
            case .signatureKeyUnsupported: "unsupported_scheme"
            case .invalidKey, .algMismatch, .keyMismatch, .signatureKeyInvalid, .keyRevoked, .keyExpired, .keyNotYetValid:
                "invalid_key"
            case .unknownKey: "unknown_key"
            case .signatureMissing, .componentNotCovered, .componentMissing, .parameterMissing, .digestMissing,
                .digestNotCovered:
                "invalid_input"
            case .clientAttestationInvalid: "invalid_jwt"
            case .clientAttestationExpired: "expired_jwt"
            case .malformedHeader, .ambiguousSignature, .createdTooOld, .createdInFuture, .expired, .nonceMissing,
                .nonceReplayed, .tagMismatch:
                "invalid_request"
            default: nil
            }
        guard let error, code.httpStatus != 403 else { return nil }
        self.error = error
        self.requiredInput = error == "invalid_input" ? requiredInput : nil
    }

    /// `error=invalid_input, required_input=("@method" "@authority")`.
    public var fieldValue: String {
        var dictionary = SFDictionary()
        dictionary.append(key: "error", member: .item(SFItem(.token(error))))
        if let requiredInput, !requiredInput.isEmpty {
            dictionary.append(key: "required_input", member: .innerList(SFInnerList(requiredInput.map { SFItem(.string($0)) })))
        }
        return (try? StructuredFieldSerializer.serialize(dictionary)) ?? "error=\(error)"
    }
}
