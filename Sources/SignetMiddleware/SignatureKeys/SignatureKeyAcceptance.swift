// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Which keys a route takes in the request itself, in `Signature-Key`
/// (draft-hardt-httpbis-signature-key-08), besides those it looks up by `keyid`:
///
/// - `hwk`: a bare public key. Nobody vouches for it, so its owner is `TrustLevel.pseudonymous`,
///   below every registered key: only a `verified` route takes it, and the upstream learns its
///   thumbprint as `Signet-Key-Id` — a pseudonym the client keeps or drops.
/// - `jwt`: a Client Attestation JWT this gateway issued; its `cnf.jwk` signs the request. An
///   attested device signs with the key the attestation names, without a registration lookup, and
///   is the device its attestation says (checked as a client-attestation route checks it: issuer,
///   client id, expiry, device still registered and not revoked).
///
/// Either way the signature must cover `signature-key` (§7.8), a `keyid` it gives must be the key's
/// RFC 7638 thumbprint (§4.3), and the key's `alg` decides the algorithm (§3.3).
public struct SignatureKeyAcceptance: Sendable {
    public enum Scheme: String, Sendable, Hashable, CaseIterable {
        case hwk, jwt
    }

    public let schemes: Set<Scheme>
    /// Checks `jwt` members; without it a `jwt` member is refused `signature_key_unsupported`.
    let attestations: ClientAttestationVerifier?
    /// The known agents the route takes (Web Bot Auth), whose keys `Signature-Agent` points to.
    public let agents: AgentAcceptance?

    public init(schemes: Set<Scheme>, attestations: ClientAttestationVerifier? = nil, agents: AgentAcceptance? = nil) {
        self.schemes = schemes
        self.attestations = attestations
        self.agents = agents
    }

    /// Whether the route takes keys of any kind this way.
    public var isEmpty: Bool { schemes.isEmpty && agents == nil }

    /// `Accept-Signature-Scheme`, in preference order.
    public var acceptSignatureScheme: String { Scheme.allCases.filter(schemes.contains).map(\.rawValue).joined(separator: ", ") }

    /// The key record `message` delivers for its signature, or `nil` when it delivers none (no
    /// `Signature-Key`, or none for a signature it carries): the verifier then looks keys up by
    /// `keyid` as for any request.
    ///
    /// - Throws: `signature_key_invalid`, `signature_key_unsupported`, `component_not_covered`,
    ///   `key_mismatch`, `alg_unsupported`, `alg_mismatch`, `invalid_key`, or the attestation's
    ///   `client_attestation_*` refusal.
    nonisolated(nonsending) public func record(
        for message: some HTTPMessageView,
        policy: VerificationPolicy,
        now: Date
    ) async throws -> KeyRecord? {
        let values = message.fieldValues("signature-key")
        let agentValues = agents == nil ? [] : message.fieldValues("signature-agent")
        guard !values.isEmpty || !agentValues.isEmpty, !message.fieldValues("signature-input").isEmpty else { return nil }
        let fields = try SignatureFields(
            of: message,
            maximumBytes: policy.maximumSignatureHeaderBytes,
            limits: policy.signatureLimits
        )
        if let agents, !agentValues.isEmpty, let entry = fields.entries.first {
            // One signature, as for a delivered key: no other label verified with the agent's key.
            guard fields.entries.count == 1 else {
                throw SignetError(.ambiguousSignature, "a request signed by an agent carries one signature")
            }
            if let record = try await agents.record(for: entry, agentField: agentValues, now: now) { return record }
        }
        guard !values.isEmpty else { return nil }
        var delivered: [(SignatureFields.Entry, SignatureKey)] = []
        for entry in fields.entries {
            if let key = try SignatureKey.member(for: entry.label, in: values) { delivered.append((entry, key)) }
        }
        guard let (entry, member) = delivered.first else { return nil }
        // One signature where a key is delivered: no other label may be verified with that key
        // without covering signature-key.
        guard fields.entries.count == 1 else {
            throw SignetError(.ambiguousSignature, "a request that delivers its key in Signature-Key carries one signature")
        }
        guard entry.parameters.components.contains(ComponentIdentifier(SignatureKey.fieldName.lowercased())) else {
            throw SignetError(.componentNotCovered, "a signature whose key is in Signature-Key must cover signature-key")
        }
        let record: KeyRecord
        switch member {
        case .hwk(let jwk) where schemes.contains(.hwk):
            let key: VerificationKey
            do {
                key = try VerificationKey(jwk: jwk)
            } catch {
                throw SignetError(.invalidKey, "the hwk key is not a usable public key")
            }
            guard key.type != .symmetric else { throw SignetError(.algUnsupported, "an hwk key is never symmetric") }
            if key.type == .rsa {
                // Anyone may deliver one: its size, and so its cost, is bounded here.
                let modulus = (jwk.n.flatMap(Base64.urlDecode) ?? []).drop { $0 == 0 }
                guard (256...512).contains(modulus.count) else {
                    throw SignetError(.invalidKey, "an hwk RSA key is 2048 to 4096 bits")
                }
            }
            record = KeyRecord(
                // The thumbprint of the key as parsed: one pseudonym per key, whatever its encoding.
                keyID: try key.jwk.thumbprint,
                algorithm: try JOSESignatureAlgorithm.rfc9421Algorithm(for: key, alg: jwk.alg),
                key: key,
                owner: KeyOwner(trustLevel: .pseudonymous)
            )
        case .jwt(let token) where schemes.contains(.jwt):
            guard let attestations else { throw SignetError(.signatureKeyUnsupported, "this route takes no jwt keys") }
            let (key, device) = try await attestations.attestedKey(token, now: now)
            record = KeyRecord(
                keyID: try key.jwk.thumbprint,
                // This gateway's attestations name no alg: the key's type decides (no RSA, whose
                // padding a key does not tell).
                algorithm: try JOSESignatureAlgorithm.rfc9421Algorithm(for: key, alg: JOSESignatureAlgorithm.name(for: key.type)),
                key: key,
                owner: device.owner
            )
        case .hwk, .jwt:
            throw SignetError(.signatureKeyUnsupported, "this route takes Signature-Key schemes \(acceptSignatureScheme)")
        case .unsupported(let scheme):
            throw SignetError(.signatureKeyUnsupported, "Signature-Key scheme \(scheme) is not one this route takes (\(acceptSignatureScheme))")
        }
        if let keyID = entry.parameters.keyID, keyID != record.keyID {
            throw SignetError(.keyMismatch, "keyid names another key than Signature-Key delivers (its RFC 7638 thumbprint)")
        }
        return record
    }
}

/// The delivered record first, under its thumbprint; every other key id from the usual resolver.
struct DeliveredKeyResolver: KeyResolver {
    let delivered: KeyRecord
    let others: any KeyResolver

    nonisolated(nonsending) func records(for keyID: String) async throws -> [KeyRecord] {
        keyID == delivered.keyID ? [delivered] : try await others.records(for: keyID)
    }
}
