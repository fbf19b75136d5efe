// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import Testing

/// `Signature-Key` members, JOSE algorithm names and `Signature-Error` as
/// draft-hardt-httpbis-signature-key-08 writes them.
@Suite struct SignatureKeyFieldTests {
    static let members = { () -> [String] in
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/signature-key/members.json")
        let object = try? JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        return object?["members"] as? [String] ?? []
    }()

    @Test func eachSchemeReadsAsTheDraftWritesIt() throws {
        #expect(Self.members.count == 5)
        guard case .hwk(let okp)? = try SignatureKey.member(for: "sig1", in: [Self.members[0]]) else { Issue.record("hwk"); return }
        #expect(okp.kty == "OKP" && okp.crv == "Ed25519" && okp.alg == "Ed25519")
        let key = try VerificationKey(jwk: okp)
        #expect(try JOSESignatureAlgorithm.rfc9421Algorithm(for: key, alg: okp.alg) == "ed25519")
        guard case .hwk(let ec)? = try SignatureKey.member(for: "sig1", in: [Self.members[1]]) else { Issue.record("EC"); return }
        #expect(try JOSESignatureAlgorithm.rfc9421Algorithm(for: try VerificationKey(jwk: ec), alg: "ES256") == "ecdsa-p256-sha256")
        guard case .hwk(let rsa)? = try SignatureKey.member(for: "sig1", in: [Self.members[2]]) else { Issue.record("RSA"); return }
        #expect(try JOSESignatureAlgorithm.rfc9421Algorithm(for: try VerificationKey(jwk: rsa), alg: "PS512") == "rsa-pss-sha512")
        guard case .jwt(let token)? = try SignatureKey.member(for: "sig1", in: [Self.members[3]]) else { Issue.record("jwt"); return }
        #expect(token.hasPrefix("eyJ"))
        // Members are found by label; another label's scheme is not this one's business.
        #expect(try SignatureKey.member(for: "sig1", in: [Self.members[4]]) == .unsupported(scheme: "x509"))
        #expect(try SignatureKey.member(for: "sig2", in: [Self.members[4]]) == (try SignatureKey.member(for: "sig1", in: [Self.members[0]])))
        #expect(try SignatureKey.member(for: "sig3", in: [Self.members[4]]) == nil)
        #expect(try SignatureKey.member(for: "sig1", in: []) == nil)
    }

    @Test func whatTheDraftForbidsIsRefused() throws {
        let okp = Self.members[0]
        for bad in [
            okp + ";kid=\"a\"", okp + ";d=\"AAAA\"", "sig1=hwk;kty=\"OKP\";crv=\"Ed25519\"", "sig1=jwt", "sig1=jwt;jwt=\"\"",
            "sig1=jwt;jwt=1", "sig1=\"hwk\"", "sig1=(hwk)", "sig1=hwk;kty=OKP;alg=\"Ed25519\"", "not a dictionary",
            "sig1=hwk;" + String(repeating: "x=\"a\";", count: 3000),
        ] {
            let error = #expect(throws: SignetError.self) { try SignatureKey.member(for: "sig1", in: [bad]) }
            #expect(error?.code == .signatureKeyInvalid, "\(bad.prefix(60))")
        }
        guard case .hwk(let jwk)? = try SignatureKey.member(for: "sig1", in: [okp]) else { return }
        let key = try VerificationKey(jwk: jwk)
        for (alg, code) in [("EdDSA", SignetError.Code.algUnsupported), ("none", .algUnsupported), ("HS256", .algUnsupported), ("ES256", .algMismatch)] {
            let error = #expect(throws: SignetError.self) { try JOSESignatureAlgorithm.rfc9421Algorithm(for: key, alg: alg) }
            #expect(error?.code == code, "\(alg)")
        }
        #expect(throws: SignetError.self) { try JOSESignatureAlgorithm.rfc9421Algorithm(for: key, alg: nil) }
    }

    @Test func signatureErrorsUseTheDraftsCodesAndNeverAnswerAPolicyRefusal() throws {
        let cases: [(SignetError.Code, String?)] = [
            (.signatureInvalid, "invalid_signature"), (.algUnsupported, "unsupported_algorithm"),
            (.signatureKeyUnsupported, "unsupported_scheme"), (.signatureKeyInvalid, "invalid_key"), (.unknownKey, "unknown_key"),
            (.clientAttestationInvalid, "invalid_jwt"), (.clientAttestationExpired, "expired_jwt"), (.nonceReplayed, "invalid_request"),
            (.trustLevelInsufficient, nil), (.appCategoryRefused, nil), (.storeUnavailable, nil),
        ]
        for (code, expected) in cases {
            #expect(SignatureErrorField(for: code)?.error == expected, "\(code)")
            if let expected { #expect(SignatureErrorField.codes.contains(expected)) }
        }
        let input = try #require(SignatureErrorField(for: .componentNotCovered, requiredInput: ["@method", "signature-key"]))
        #expect(input.fieldValue == #"error=invalid_input, required_input=("@method" "signature-key")"#)
        #expect(SignatureErrorField(for: .signatureInvalid, requiredInput: ["@method"])?.fieldValue == "error=invalid_signature")
    }
}
