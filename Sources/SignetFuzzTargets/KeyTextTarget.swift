// SPDX-License-Identifier: Apache-2.0
import SignetCore

extension FuzzTarget {
    /// Keys as configuration and the CLI read them: PEM (SPKI, PKCS#1, PKCS#8, SEC1), JWK, base64 secrets.
    static let keyText = FuzzTarget(
        "key-text",
        property: "a key read from text writes PEM and a JWK that read back as the same key; a JWK re-serialises to itself",
        seeds: { vectors in
            try vectors.files(in: "rfc9421/keys", suffix: "").map { try vectors.bytes($0) }
        },
        check: { bytes in
            guard let keyText = text(bytes) else { return }
            if let jwk = try? JWK(json: bytes) {
                let again = try reparsed(jwk.jsonString) { try JWK(json: Array($0.utf8)) }
                try expect(again == jwk, "the JWK \(keyText.debugDescription) writes \(jwk.jsonString), which reads as \(again)")
            }
            if let key = try? SigningKey(text: keyText), let pem = key.pemRepresentation {
                let again = try reparsed(pem) { try SigningKey(pem: $0) }
                try expect(again.pemRepresentation == pem, "a private key's PEM is not stable: \(keyText.debugDescription)")
                try expect(
                    again.verificationKey.pemRepresentation == key.verificationKey.pemRepresentation,
                    "a private key's public half changed on re-reading \(keyText.debugDescription)")
            }
            guard let key = try? VerificationKey(text: keyText), let pem = key.pemRepresentation else { return }
            let fromPEM = try reparsed(pem) { try VerificationKey(pem: $0) }
            try expect(fromPEM.pemRepresentation == pem, "the PEM written for \(keyText.debugDescription) reads as another key")
            try expect(fromPEM.spkiDER == key.spkiDER, "the SPKI of \(keyText.debugDescription) changed through PEM")
            let fromJWK = try reparsed(key.jwk.jsonString) { try VerificationKey(jwk: JWK(json: Array($0.utf8))) }
            try expect(fromJWK.pemRepresentation == pem, "the JWK written for \(keyText.debugDescription) reads as another key")
        }
    )
}
