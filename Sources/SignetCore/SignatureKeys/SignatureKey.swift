// SPDX-License-Identifier: Apache-2.0

/// One member of the `Signature-Key` request field (draft-hardt-httpbis-signature-key-08 §3): the
/// key that verifies the signature of the same label, delivered in the request rather than looked
/// up by `keyid`.
///
/// The field is a Dictionary keyed by signature label; a member is a scheme token with string
/// parameters: `sig=hwk;kty="OKP";crv="Ed25519";x="…";alg="Ed25519"` or `sig=jwt;jwt="eyJ…"`.
/// Signet reads two schemes: `hwk` (a bare public key: pseudonymous) and `jwt` (a JWT whose
/// `cnf.jwk` is the signing key); any other is kept as unsupported, for the verifier to refuse with
/// the scheme's name.
public enum SignatureKey: Sendable, Hashable {
    /// A public key, `alg` given, as §3.4 requires.
    case hwk(JWK)
    /// A JWT whose `cnf.jwk` is the signing key (§3.8).
    case jwt(String)
    /// A scheme Signet does not take (`jwks_uri`, `x509`, …).
    case unsupported(scheme: String)

    public static let fieldName = "Signature-Key"
    /// The field may not be longer: a JWT and its key fit many times over.
    public static let maximumFieldBytes = 16 * 1024

    /// The member for `label` in the field's values (joined as one field); `nil` when the request
    /// has no `Signature-Key` or no member for that label.
    ///
    /// - Throws: `signature_key_invalid` for a field that does not parse, or a member of a known
    ///   scheme without what that scheme requires.
    public static func member(for label: String, in values: [String]) throws -> SignatureKey? {
        guard !values.isEmpty else { return nil }
        let value = values.joined(separator: ", ")
        guard value.utf8.count <= maximumFieldBytes else {
            throw SignetError(.signatureKeyInvalid, "Signature-Key is longer than \(maximumFieldBytes) bytes")
        }
        let dictionary: SFDictionary
        do {
            dictionary = try StructuredFieldParser.parseDictionary(
                value,
                limits: .init(members: 8, innerListItems: 0, parameters: 16)
            )
        } catch {
            throw SignetError(.signatureKeyInvalid, "Signature-Key is not a structured field dictionary")
        }
        guard let entry = dictionary[label] else { return nil }
        guard case .item(let item) = entry.member, case .token(let scheme) = item.bareItem else {
            throw SignetError(.signatureKeyInvalid, "the Signature-Key member \(label) is not a scheme token")
        }
        func string(_ name: String) throws -> String? {
            switch item.parameters[name] {
            case nil: return nil
            case .string(let text)?: return text
            default: throw SignetError(.signatureKeyInvalid, "the Signature-Key parameter \(name) is not a string")
            }
        }
        switch scheme {
        case "hwk":
            // §3.4: `alg` fully specified, `kid` never.
            guard item.parameters["kid"] == nil else {
                throw SignetError(.signatureKeyInvalid, "an hwk key carries no kid")
            }
            guard let kty = try string("kty"), let alg = try string("alg") else {
                throw SignetError(.signatureKeyInvalid, "an hwk key needs kty and alg")
            }
            var jwk = JWK(kty: kty)
            jwk.crv = try string("crv")
            jwk.x = try string("x")
            jwk.y = try string("y")
            jwk.n = try string("n")
            jwk.e = try string("e")
            jwk.alg = alg
            for secret in ["d", "p", "q", "dp", "dq", "qi", "k"] where item.parameters[secret] != nil {
                throw SignetError(.signatureKeyInvalid, "an hwk key is public: it carries no \(secret)")
            }
            return .hwk(jwk)
        case "jwt":
            guard let token = try string("jwt"), !token.isEmpty else {
                throw SignetError(.signatureKeyInvalid, "a jwt member needs its jwt")
            }
            return .jwt(token)
        default:
            return .unsupported(scheme: scheme)
        }
    }
}
