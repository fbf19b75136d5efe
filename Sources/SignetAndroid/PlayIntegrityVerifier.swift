// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// Verifies a classic Play Integrity token locally, with the two keys the Play Console gives: the
/// token is a compact JWE (`A256KW` key wrapping, `A256GCM` content) around a compact JWS (`ES256`)
/// whose payload is the verdict.
///
/// In order, each with its reason code: the JWE's header names `A256KW`/`A256GCM` and nothing else,
/// its key unwraps and its content decrypts under the decryption key (`token_invalid`); the JWS
/// names `ES256` and its signature verifies under the verification key (`token_invalid`); the
/// verdict is recent (`token_expired`), carries the server's nonce (`attestation_nonce_mismatch`),
/// names an allowed package and signing certificate (`app_id_mismatch`); then the policy on the
/// verdicts (`integrity_verdict_insufficient`).
///
/// Written here rather than with jwt-kit: jwt-kit verifies JWS but does not decrypt JWE, and the
/// two algorithms Google uses are swift-crypto's `AES.KeyWrap` and `AES.GCM`.
public struct PlayIntegrityVerifier: Sendable {
    /// The Play Console's "decryption key" (AES-256).
    public let decryptionKey: SymmetricKey
    /// The Play Console's "verification key" (EC P-256).
    public let verificationKey: P256.Signing.PublicKey
    public var policy: PlayIntegrityPolicy

    /// The longest token read (Google's are about 1.5 KiB).
    public static let maximumTokenBytes = 16 * 1024

    /// - Parameters:
    ///   - decryptionKey: The decryption key as the Play Console shows it: base64 of 32 bytes.
    ///   - verificationKey: The verification key: base64 of its X.509 SubjectPublicKeyInfo (as the
    ///     Play Console shows it), or PEM.
    ///   - policy: What the verdict must say.
    /// - Throws: `invalid_key` for a key that is not one of those.
    public init(decryptionKey: String, verificationKey: String, policy: PlayIntegrityPolicy) throws {
        let trimmed = decryptionKey.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let secret = Base64.decode(trimmed) ?? Base64.urlDecode(trimmed), secret.count == 32 else {
            throw SignetError(.invalidKey, "the Play Integrity decryption key is base64 of 32 bytes")
        }
        let text = verificationKey.trimmingCharacters(in: .whitespacesAndNewlines)
        let key: P256.Signing.PublicKey
        do {
            if text.hasPrefix("-----BEGIN") {
                key = try P256.Signing.PublicKey(pemRepresentation: text)
            } else {
                guard let der = Base64.decode(text) ?? Base64.urlDecode(text) else { throw SignetError(.invalidKey, "not base64") }
                key = try P256.Signing.PublicKey(derRepresentation: der)
            }
        } catch {
            throw SignetError(.invalidKey, "the Play Integrity verification key is an EC P-256 public key (base64 DER or PEM)")
        }
        self.init(decryptionKey: SymmetricKey(data: secret), verificationKey: key, policy: policy)
    }

    public init(decryptionKey: SymmetricKey, verificationKey: P256.Signing.PublicKey, policy: PlayIntegrityPolicy) {
        self.decryptionKey = decryptionKey
        self.verificationKey = verificationKey
        self.policy = policy
    }

    /// The verdict, or the first step's refusal.
    ///
    /// - Parameters:
    ///   - token: The compact JWE the app received from Google Play.
    ///   - nonce: What the token's `nonce` (classic) or `requestHash` (standard) must be: the
    ///     server's challenge, or a digest of the signature base; unchecked when `nil`.
    ///   - now: The verifier's time.
    public func verify(_ token: String, nonce: String?, now: Date) throws -> PlayIntegrityVerdict {
        let inspection = inspect(token, nonce: nonce, now: now)
        if let failure = inspection.steps.firstRefusal { throw failure }
        guard let verdict = inspection.verdict else { throw SignetError(.tokenInvalid, "the integrity token did not verify") }
        return verdict
    }

    /// Every step, passed or not, stopping at the first refusal; the verdict once read.
    public func inspect(_ token: String, nonce: String?, now: Date) -> PlayIntegrityInspection {
        var inspection = PlayIntegrityInspection()
        func step(_ name: String, _ body: () throws -> Void) -> Bool {
            let step = InspectionStep.run(name, refusing: .tokenInvalid, body)
            inspection.steps.append(step)
            return step.error == nil
        }
        var jws = ""
        var verdict: PlayIntegrityVerdict?
        guard
            step("the token decrypts (JWE A256KW, A256GCM)", { jws = try decrypt(token) }),
            step("the verdict is signed by Google Play (JWS ES256)", {
                let payload = try verifySignature(jws)
                do {
                    verdict = try JSONDecoder().decode(PlayIntegrityVerdict.self, from: Data(payload))
                } catch {
                    throw SignetError(.tokenInvalid, "the integrity verdict is not the JSON Google Play signs")
                }
            }),
            let verdict,
            policy.checks(verdict, nonce: nonce, now: now).allSatisfy({ step($0.name, $0.run) })
        else {
            inspection.verdict = nil
            inspection.partialVerdict = verdict
            return inspection
        }
        inspection.verdict = verdict
        return inspection
    }

    /// The compact JWE's plaintext: the compact JWS.
    func decrypt(_ token: String) throws -> String {
        guard token.utf8.count <= Self.maximumTokenBytes else {
            throw SignetError(.tokenInvalid, "the integrity token is longer than \(Self.maximumTokenBytes) bytes")
        }
        let parts = token.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 5 else { throw SignetError(.tokenInvalid, "the integrity token is not a compact JWE (five parts)") }
        let header = try Self.header(parts[0])
        guard header["alg"] as? String == "A256KW", header["enc"] as? String == "A256GCM", header["zip"] == nil else {
            throw SignetError(.tokenInvalid, "the integrity token's JWE is not A256KW with A256GCM")
        }
        guard let wrapped = Base64.urlDecode(String(parts[1])), let iv = Base64.urlDecode(String(parts[2])),
            let ciphertext = Base64.urlDecode(String(parts[3])), let tag = Base64.urlDecode(String(parts[4])),
            iv.count == 12, tag.count == 16
        else { throw SignetError(.tokenInvalid, "the integrity token's JWE parts are not base64url of the sizes A256GCM uses") }
        let plaintext: Data
        do {
            let contentKey = try AES.KeyWrap.unwrap(wrapped, using: decryptionKey)
            // A256GCM's key is 256 bits (RFC 7518 §5.3).
            guard contentKey.bitCount == 256 else { throw SignetError(.tokenInvalid, "the content key is not 256 bits") }
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: ciphertext, tag: tag)
            // The protected header, as sent, is the additional data (RFC 7516 §5.1 step 14).
            plaintext = try AES.GCM.open(box, using: contentKey, authenticating: Array(parts[0].utf8))
        } catch {
            throw SignetError(.tokenInvalid, "the integrity token does not decrypt with the decryption key")
        }
        guard let jws = String(strictUTF8: Array(plaintext)) else { throw SignetError(.tokenInvalid, "the decrypted token is not text") }
        return jws
    }

    /// The compact JWS's payload, once its ES256 signature verified.
    func verifySignature(_ jws: String) throws -> [UInt8] {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw SignetError(.tokenInvalid, "the decrypted token is not a compact JWS") }
        let header = try Self.header(parts[0])
        guard header["alg"] as? String == "ES256" else {
            throw SignetError(.tokenInvalid, "the verdict is signed with \(header["alg"] as? String ?? "no algorithm"), not ES256")
        }
        guard let payload = Base64.urlDecode(String(parts[1])), let signature = Base64.urlDecode(String(parts[2])),
            signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { throw SignetError(.tokenInvalid, "the verdict's JWS parts are not base64url of an ES256 signature") }
        let signed = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        guard verificationKey.isValidSignature(ecdsa, for: signed) else {
            throw SignetError(.tokenInvalid, "the verdict's signature does not verify with the verification key")
        }
        return payload
    }

    static func header(_ part: Substring) throws -> [String: Any] {
        guard let bytes = Base64.urlDecode(String(part)), bytes.count <= 1024,
            let header = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { throw SignetError(.tokenInvalid, "a JOSE header of the integrity token is not base64url JSON") }
        // A critical extension this verifier does not know must not be ignored (RFC 7515 §4.1.11).
        guard header["crit"] == nil else { throw SignetError(.tokenInvalid, "the integrity token has critical header parameters") }
        return header
    }
}

/// Every step of a Play Integrity check, passed or not, and the verdict.
public struct PlayIntegrityInspection: Sendable {
    public typealias Step = InspectionStep

    public var steps: [Step] = []
    /// Set only when every step passed.
    public var verdict: PlayIntegrityVerdict?
    /// The verdict as read when a later step refused it (for `signet inspect`).
    public var partialVerdict: PlayIntegrityVerdict?

    public var passed: Bool { verdict != nil && steps.allSatisfy { $0.error == nil } }
}
