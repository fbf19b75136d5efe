// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import SignetCore
import SignetStore

/// Checks the client attestation a request carries (draft-ietf-oauth-attestation-based-client-auth-11
/// §7): exactly one `OAuth-Client-Attestation`, a Client Attestation JWT this gateway issued (its
/// type, a published key, the issuer, an accepted client id, not expired), its device still
/// registered and active; exactly one `OAuth-Client-Attestation-PoP`, signed by the attested key
/// for this server's audience within the window (`ClientAttestationPoP`); the server's challenge
/// where the route asks for one; and — only after all of that passed — the PoP's `jti` claimed once
/// in the store, across instances.
///
/// Refusals carry the draft's OAuth error in the problem's `error` member (§7.4) and, for a missing
/// or old challenge, a fresh one in `OAuth-Client-Attestation-Challenge` (§6.1), so a client
/// retries on its own.
public struct ClientAttestationVerifier: Sendable {
    /// The attestations' issuer (the app tokens').
    public let issuer: String
    /// The client ids an attestation may speak for (`sub`).
    public let clientIDs: [String]
    /// How old a PoP's `iat` may be.
    public let proofLifetime: TimeInterval
    /// How long a server challenge is taken.
    public let challengeLifetime: TimeInterval
    public let clockSkew: TimeInterval
    let keys: AppTokenKeys
    let devices: any KeyResolver
    let nonces: any NonceStore
    let challengeKey: SharedServerKey
    let riskLimit: RiskLimit?
    /// Checks the DPoP proof of a request in combined mode (§6); `nil` takes no such request.
    let dpop: DPoPVerifier?

    /// The nonce-store namespace of PoP ids (no key id starts with `:`).
    static let claimNamespace = ":client-attestation"
    static var challengeSecretName: String { "client-attestation-challenge-key" }
    public static var attestationField: HTTPField.Name { HTTPField.Name("OAuth-Client-Attestation")! }
    public static var proofField: HTTPField.Name { HTTPField.Name("OAuth-Client-Attestation-PoP")! }
    public static var challengeField: HTTPField.Name { HTTPField.Name("OAuth-Client-Attestation-Challenge")! }

    /// - Parameters:
    ///   - issuer: The attestations' issuer, whose key ring checks them.
    ///   - clientIDs: The client ids accepted in `sub`; the issuer's own when empty.
    ///   - devices: Resolves an attestation's `key_id` to the device, as for signatures.
    ///   - store: Where PoP ids are claimed and the challenge key is shared.
    ///   - riskLimit: The App Attest risk limit, as for signatures.
    ///   - dpop: Checks a DPoP proof that stands in for the PoP (combined mode, §6).
    ///   - proofLifetime: How old a PoP may be.
    ///   - challengeLifetime: How long a server challenge is taken.
    ///   - clockSkew: Seconds an `exp` or `iat` may be off.
    public init(
        issuer: ClientAttestationIssuer,
        clientIDs: [String] = [],
        devices: any KeyResolver,
        store: any NonceStore & ServerSecretStore,
        riskLimit: RiskLimit? = nil,
        dpop: DPoPVerifier? = nil,
        proofLifetime: TimeInterval = 60,
        challengeLifetime: TimeInterval = 300,
        clockSkew: TimeInterval = 30
    ) {
        self.issuer = issuer.issuer
        self.clientIDs = clientIDs.isEmpty ? [issuer.clientID] : clientIDs
        self.keys = issuer.keys
        self.devices = devices
        self.nonces = store
        self.challengeKey = SharedServerKey(name: Self.challengeSecretName, store: store)
        self.riskLimit = riskLimit
        self.dpop = dpop
        self.proofLifetime = proofLifetime
        self.challengeLifetime = challengeLifetime
        self.clockSkew = clockSkew
    }

    /// A fresh challenge (§6): what the challenge endpoint and a `use_attestation_challenge`
    /// refusal hand out.
    public func challenge(now: Date) async throws -> ServerNonce {
        ServerNonce.mint(.clientAttestationChallenge, secret: try await challengeKey.key(), now: now)
    }

    /// The identity the request's attestation speaks for, or the reason it does not.
    ///
    /// - Parameters:
    ///   - fields: The request's fields.
    ///   - audience: This server's identifier, which the PoP's `aud` must be.
    ///   - requireChallenge: The PoP must carry a current challenge of this gateway's.
    ///   - now: The time the request is judged at.
    /// - Throws: `client_attestation_*` codes; ``ChallengedRefusal`` with a fresh challenge for
    ///   `client_attestation_challenge_required`.
    public func identity(
        for fields: HTTPFields,
        audience: String,
        requireChallenge: Bool,
        now: Date
    ) async throws -> SignetIdentity {
        let attestations = fields[values: Self.attestationField]
        let proofs = fields[values: Self.proofField]
        guard let attestation = attestations.first, let proofText = proofs.first else {
            throw SignetError(.clientAttestationMissing, "this route needs OAuth-Client-Attestation and OAuth-Client-Attestation-PoP")
        }
        guard attestations.count == 1, proofs.count == 1 else {
            throw SignetError(.clientAttestationInvalid, "OAuth-Client-Attestation and its PoP are each given once")
        }
        let (claims, key, record, trustLevel) = try await attested(attestation, now: now)
        let proof = try await possession(of: key, proof: proofText, audience: audience, requireChallenge: requireChallenge, now: now)
        return Self.identity(claims, record: record, trustLevel: trustLevel, jti: proof.jti, made: proof.issued)
    }

    /// The identity `request`'s attestation speaks for: with its PoP, or — where the request
    /// carries no PoP but a `DPoP` proof and this verifier takes them — in combined mode
    /// (draft -11 §5.2, §7.3), the DPoP proof checked as RFC 9449 says, by the attested key,
    /// claimed once. Combined mode takes no attestation challenge: where the route asks for
    /// challenges, the proof carries a current DPoP nonce instead (RFC 9449 §9).
    ///
    /// - Returns: The identity, and the fields its answer carries: in combined mode a renewed
    ///   `DPoP-Nonce` where one is due (possibly none); `nil` with a PoP.
    /// - Throws: as ``identity(for:audience:requireChallenge:now:)``, and `dpop_*` codes in
    ///   combined mode (`dpop_nonce_required` with a fresh `DPoP-Nonce`).
    public func identity(
        for request: Request,
        receivedTarget: String?,
        audience: String,
        requireChallenge: Bool,
        now: Date
    ) async throws -> (identity: SignetIdentity, combined: HTTPFields?) {
        let fields = request.headers
        guard fields[values: Self.proofField].isEmpty, let dpop, !fields[values: DPoPVerifier.proofField].isEmpty else {
            return (try await identity(for: fields, audience: audience, requireChallenge: requireChallenge, now: now), nil)
        }
        let attestations = fields[values: Self.attestationField]
        guard let attestation = attestations.first else {
            throw SignetError(.clientAttestationMissing, "this route needs OAuth-Client-Attestation with its PoP or DPoP proof")
        }
        guard attestations.count == 1 else { throw SignetError(.clientAttestationInvalid, "OAuth-Client-Attestation is given once") }
        let (claims, key, record, trustLevel) = try await attested(attestation, now: now)
        let proof = try dpop.proof(request, receivedTarget: receivedTarget, accessToken: nil, now: now)
        guard ConstantTime.equals(Array(proof.thumbprint.utf8), Array(try key.jwk.thumbprint.utf8)) else {
            throw SignetError(.clientAttestationPoPInvalid, "the DPoP proof is signed by another key than the attested one (cnf.jwk)")
        }
        let renewal = requireChallenge ? try await dpop.currentNonce(in: proof, now: now) : HTTPFields()
        try await dpop.claim(proof, now: now)
        return (Self.identity(claims, record: record, trustLevel: trustLevel, jti: proof.jti, made: proof.issued), renewal)
    }

    /// A fresh `DPoP-Nonce` where this verifier takes combined mode, for the challenge endpoint
    /// (draft -11 §6.3); `nil` otherwise.
    public func dpopNonce(now: Date) async throws -> String? {
        try await dpop?.freshNonce(now: now)
    }

    /// The claims, attested key and device of an attestation this gateway issued, every check of
    /// §7.1 passed.
    private func attested(_ attestation: String, now: Date) async throws -> (ClientAttestationClaims, VerificationKey, KeyRecord, TrustLevel) {
        let claims = try await keys.verify(
            attestation,
            as: ClientAttestationClaims.self,
            type: ClientAttestationIssuer.type,
            now: now,
            refusing: .clientAttestationInvalid,
            "client attestation"
        )
        guard claims.iss == issuer, clientIDs.contains(claims.sub) else {
            throw SignetError(.clientAttestationInvalid, "the client attestation is not this gateway's for an accepted client id")
        }
        guard now.timeIntervalSince(claims.exp) <= clockSkew else {
            throw SignetError(.clientAttestationExpired, "the client attestation expired at \(JSONResponse.rfc3339(claims.exp)): ask for a fresh one")
        }
        guard claims.iat.timeIntervalSince(now) <= clockSkew, let trustLevel = TrustLevel(rawValue: claims.trustLevel) else {
            throw SignetError(.clientAttestationInvalid, "the client attestation is issued in the future or names an unknown trust level")
        }
        guard !claims.cnf.jwk.hasPrivateMembers, let key = try? VerificationKey(jwk: claims.cnf.jwk) else {
            throw SignetError(.clientAttestationInvalid, "the client attestation's cnf.jwk is not a public key")
        }
        let records = try await devices.records(for: claims.keyID)
        guard let record = records.first(where: { $0.owner?.deviceID == claims.deviceID }), record.isUsable(at: now) else {
            throw SignetError(.clientAttestationInvalid, "the attested device is no longer registered or is revoked")
        }
        try riskLimit?.check(record.owner)
        return (claims, key, record, trustLevel)
    }

    /// The key an attestation this gateway issued attests (`cnf.jwk`) and its device's record, every
    /// check of §7.1 passed: how a `Signature-Key` `jwt` member delivers a signing key.
    ///
    /// - Throws: `client_attestation_invalid`, `client_attestation_expired`, `risk_metric_exceeded`.
    public func attestedKey(_ attestation: String, now: Date) async throws -> (key: VerificationKey, device: KeyRecord) {
        let (_, key, record, _) = try await attested(attestation, now: now)
        return (key, record)
    }

    /// Who a request whose attestation and proof passed is from: the attested device, the client
    /// id as its app.
    private static func identity(_ claims: ClientAttestationClaims, record: KeyRecord, trustLevel: TrustLevel, jti: String, made: Date) -> SignetIdentity {
        var identity = SignetIdentity(
            deviceID: claims.deviceID,
            keyID: claims.keyID,
            trustLevel: trustLevel,
            algorithm: "client-attestation",
            nonce: jti,
            created: made,
            user: record.owner?.user,
            appID: claims.sub
        )
        identity.riskMetric = record.owner?.riskMetric
        identity.integrityFlags = record.owner?.integrityFlags ?? []
        return identity
    }

    /// Refuses with a fresh challenge unless `challenge` is a current one of this gateway's.
    private func requireCurrentChallenge(_ challenge: String?, now: Date) async throws {
        let secret = try await challengeKey.key()
        let current = challenge.map {
            ServerNonce.isCurrent($0, .clientAttestationChallenge, secret: secret, lifetime: challengeLifetime, clockSkew: clockSkew, now: now)
        }
        guard current != true else { return }
        var refusal = ChallengedRefusal(
            SignetError(.clientAttestationChallengeRequired, "this route needs a current server challenge in the proof: use OAuth-Client-Attestation-Challenge of this answer"),
            challenges: []
        )
        refusal.fields[Self.challengeField] = ServerNonce.mint(.clientAttestationChallenge, secret: secret, now: now).value
        throw refusal
    }

    /// Checks that the holder of `key` made `proofText` for `audience` (`ClientAttestationPoP`),
    /// with a current challenge where `requireChallenge`, and — only after that passed — claims its
    /// `jti` once across instances.
    ///
    /// - Throws: `client_attestation_pop_*`; ``ChallengedRefusal`` with a fresh challenge for
    ///   `client_attestation_challenge_required`.
    public func possession(
        of key: VerificationKey,
        proof proofText: String,
        audience: String,
        requireChallenge: Bool,
        now: Date
    ) async throws -> ClientAttestationPoP {
        let proof = try ClientAttestationPoP(
            verifying: proofText,
            key: key,
            audience: audience,
            now: now,
            lifetime: proofLifetime,
            clockSkew: clockSkew
        )
        if requireChallenge { try await requireCurrentChallenge(proof.challenge, now: now) }
        let claimed = try await nonces.claim(
            keyID: Self.claimNamespace,
            nonce: (try key.jwk.thumbprint) + "." + proof.jti,
            until: proof.issued.addingTimeInterval(proofLifetime + 2 * clockSkew),
            now: now
        )
        guard claimed else { throw SignetError(.clientAttestationPoPReplayed, "this client attestation PoP was used before") }
        return proof
    }

    /// The draft's OAuth error code (§7.4) for a `client_attestation_*` refusal:
    /// `use_attestation_challenge`, `use_fresh_attestation`, or `invalid_client_attestation`;
    /// `nil` for any other code.
    public static func oauthError(for code: SignetError.Code) -> String? {
        switch code {
        case .clientAttestationChallengeRequired: "use_attestation_challenge"
        case .clientAttestationExpired: "use_fresh_attestation"
        case .clientAttestationMissing, .clientAttestationInvalid, .clientAttestationPoPInvalid, .clientAttestationPoPStale,
            .clientAttestationPoPReplayed:
            "invalid_client_attestation"
        default: nil
        }
    }
}
