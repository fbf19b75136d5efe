// SPDX-License-Identifier: Apache-2.0
import Foundation
import JWTKit
import SignetCore

/// The trust keys an app compiles in (several, so the trust key itself can rotate), and the one
/// check every trust document passes: a compact JWS signed ES256 or EdDSA by one of them, not
/// expired. jwt-kit does the JOSE: only the keys added here can verify, so `alg: none` and an HMAC
/// "signed" with a public key have nothing to verify with.
///
/// jwt-kit verifies with the key the `kid` selects (or each key in turn) and never compares the
/// header's `alg` with it: a header saying `EdDSA` over a P-256 signature verified. So the keys are
/// held apart by algorithm and a document is checked only against the keys of the algorithm its
/// header names (RFC 8725 §3.1: the algorithm is the key's, and the header must agree with it).
public struct TrustKeys: Sendable {
    /// The keys by the JWS `alg` they verify: `ES256` (P-256) and `EdDSA` (Ed25519).
    private let keysByAlgorithm: [String: JWTKeyCollection]

    /// - Parameter publicKeys: PEM (SPKI) P-256 or Ed25519 public keys, by key id (`kid`).
    public init(publicKeys: [String: String]) async throws {
        guard !publicKeys.isEmpty else { throw SignetError(.invalidKey, "give at least one trust key") }
        let es256 = JWTKeyCollection()
        let eddsa = JWTKeyCollection()
        for (kid, pem) in publicKeys {
            let key = try VerificationKey(pem: pem)
            switch key.type {
            case .p256:
                await es256.add(ecdsa: try ES256PublicKey(pem: pem), kid: JWKIdentifier(string: kid))
            case .ed25519:
                await eddsa.add(eddsa: EdDSA.PublicKey(backing: key.ed25519PublicKey!), kid: JWKIdentifier(string: kid))
            default:
                throw SignetError(.invalidKey, "a trust key is P-256 (ES256) or Ed25519 (EdDSA), not \(key.type.rawValue)")
            }
        }
        self.keysByAlgorithm = ["ES256": es256, "EdDSA": eddsa]
    }

    /// The document in `jws`, if it verifies under one of the keys of the algorithm its header
    /// names and has not expired at `now`.
    ///
    /// - Throws: `trust_document_invalid` or `trust_document_expired`.
    public func verify(_ jws: String, now: Date) async throws -> TrustDocument {
        let compact = jws.trimmingCharacters(in: .whitespacesAndNewlines)
        let header = compact.split(separator: ".", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard let headerBytes = Base64.urlDecode(header),
            let object = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let alg = object["alg"] as? String, let keys = keysByAlgorithm[alg]
        else { throw SignetError(.trustDocumentInvalid, "the JWS header does not name ES256 or EdDSA") }
        let document: TrustDocument
        do {
            document = try await keys.verify(compact, as: TrustDocument.self, iteratingKeys: object["kid"] == nil)
        } catch {
            throw SignetError(.trustDocumentInvalid, "the trust document does not verify under a trusted \(alg) key")
        }
        guard now < document.exp.value else {
            throw SignetError(.trustDocumentExpired, "the trust document expired at \(document.exp.value)")
        }
        return document
    }
}
