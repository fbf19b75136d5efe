// SPDX-License-Identifier: Apache-2.0
import SignetCore

extension FuzzTarget {
    /// `Signature-Input` and `Signature` (the input's two lines): the fast path and the general parser.
    static let signatureFields = FuzzTarget(
        "signature-fields",
        property: "the single-signature fast path agrees with the general parser, and parameters re-serialise to what parses the same",
        seeds: { vectors in
            let fields = try vectors.messageFields()
            let inputs = fields.filter { $0.name == "signature-input" }.map(\.value)
            let signatures = fields.filter { $0.name == "signature" }.map(\.value)
            return zip(inputs, signatures).map { Array(($0 + "\n" + $1).utf8) }
        },
        check: { bytes in
            let (first, second) = halves(bytes)
            guard let input = text(first), let signature = text(second) else { return }
            let general = try? SignatureFields.parse(input: input, signature: signature)
            if let fast = SingleSignatureScanner.entry(input: input, signature: signature) {
                try expect(general == [fast], "the fast path read \(input.debugDescription) as \(fast), the parser as \(String(describing: general))")
            }
            for entry in general ?? [] {
                let parameters = entry.parameters
                let rebuilt = SignatureParameters(
                    components: parameters.components, created: parameters.created, expires: parameters.expires,
                    nonce: parameters.nonce, algorithm: parameters.algorithm, keyID: parameters.keyID, tag: parameters.tag)
                let written = try serialised { try rebuilt.serialized }
                let again = try reparsed(written) { try SignatureFields.parse(input: "a=" + $0, signature: "a=:AA==:") }
                let read = again.first?.parameters
                try expect(
                    read?.components == parameters.components && read?.created == parameters.created
                        && read?.expires == parameters.expires && read?.nonce == parameters.nonce
                        && read?.algorithm == parameters.algorithm && read?.keyID == parameters.keyID && read?.tag == parameters.tag,
                    "parameters of \(input.debugDescription) re-read differently from \(written.debugDescription)")
            }
        }
    )

    /// `Content-Digest` and a body (the input's first line, then the rest).
    static let contentDigest = FuzzTarget(
        "content-digest",
        property: "a digest field verifies only the body it names; the field written for a body verifies it",
        seeds: { vectors in
            let examples = (try vectors.object("rfc9421/rfc9530-content-digest.json")["examples"] as? [[String: Any]]) ?? []
            return examples.compactMap { example in
                guard let field = example["field_value"] as? String, let content = example["content"] as? String else { return nil }
                return Array((field + "\n" + content).utf8)
            }
        },
        check: { bytes in
            let (first, body) = halves(bytes)
            try expect(
                (try? ContentDigest.verify(ContentDigest.fieldValue(for: body), body: body)) != nil,
                "the digest written for a \(body.count)-byte body does not verify it")
            guard let field = text(first), (try? ContentDigest.verify(field, body: body)) != nil else { return }
            // Accepted: a different body must not verify against the same field.
            try expect(
                (try? ContentDigest.verify(field, body: body + [0])) == nil,
                "\(field.debugDescription) verifies both a body and that body with a byte appended")
        }
    )
}
