// SPDX-License-Identifier: Apache-2.0
import SignetCore

extension FuzzTarget {
    /// `Signature-Key` members (draft-hardt-httpbis-signature-key-08) as the gateway reads them
    /// before it knows anything of the sender.
    static let signatureKey = FuzzTarget(
        "signature-key",
        property: "a member read is read again the same; an hwk key written back as a member reads as the same key",
        seeds: { vectors in
            let members = try vectors.object("signature-key/members.json")["members"] as? [String] ?? []
            return members.map { Array($0.utf8) }
        },
        check: { bytes in
            guard let text = text(bytes) else { return }
            for label in ["sig1", "sig2"] {
                guard let member = try? SignatureKey.member(for: label, in: [text]) else { continue }
                try expect((try? SignatureKey.member(for: label, in: [text])) == member, "a member read twice reads differently")
                guard case .hwk(let jwk) = member else { continue }
                try expect(jwk.alg != nil && jwk.kid == nil && jwk.d == nil, "an hwk key was read without alg, or with kid or d")
                var parameters = [("kty", jwk.kty)]
                for (name, value) in [("crv", jwk.crv), ("x", jwk.x), ("y", jwk.y), ("n", jwk.n), ("e", jwk.e), ("alg", jwk.alg)] {
                    if let value { parameters.append((name, value)) }
                }
                var dictionary = SFDictionary()
                dictionary.append(
                    key: label,
                    member: .item(SFItem(.token("hwk"), parameters: SFParameters(parameters.map { ($0.0, .string($0.1)) })))
                )
                let written = try StructuredFieldSerializer.serialize(dictionary)
                try expect(try SignatureKey.member(for: label, in: [written]) == member, "\(text) written back as \(written) reads otherwise")
            }
        }
    )
}
