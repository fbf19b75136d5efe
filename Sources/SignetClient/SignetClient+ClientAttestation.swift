// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// A Client Attestation JWT as the gateway gave it (draft-ietf-oauth-attestation-based-client-auth-11).
public struct ClientAttestation: Sendable, Hashable {
    /// The compact JWS, sent in `OAuth-Client-Attestation`.
    public let attestation: String
    public let expiresAt: Date
    /// The OAuth client id it speaks for.
    public let clientID: String
    /// What PoPs name as `aud` on the gateway's routes; `nil` when the gateway did not say.
    public let audience: String?
}

/// Client attestations: asked for with a signed request, cached per origin, renewed
/// ``SignetClientConfiguration/appTokenRenewal`` before they expire, and sent with a fresh PoP by
/// the device key on the configured ``SignetClientConfiguration/clientAttestationPaths`` in place
/// of a signature, following the gateway's challenges.
extension SignetClient {
    /// An attestation from the gateway at `origin` (the first configured one by default): the cached
    /// one while it has more than the renewal margin left, else a new one.
    public func clientAttestation(origin: Origin? = nil) async throws -> ClientAttestation {
        let origin = origin ?? configuration.origins[0]
        if let cached = clientAttestations[origin], cached.expiresAt.timeIntervalSince(gatewayNow) > configuration.appTokenRenewal.seconds {
            return cached
        }
        if let pending = clientAttestationFetches[origin] { return try await pending.value }
        let generation = signerGeneration
        let task = Task { try await fetchClientAttestation(origin: origin) }
        clientAttestationFetches[origin] = task
        let attestation: ClientAttestation
        do {
            attestation = try await task.value
        } catch {
            if signerGeneration == generation { clientAttestationFetches[origin] = nil }
            throw error
        }
        // One fetched for a signer replaced meanwhile is of the old key: neither kept nor given.
        guard signerGeneration == generation else { return try await clientAttestation(origin: origin) }
        clientAttestationFetches[origin] = nil
        clientAttestations[origin] = attestation
        return attestation
    }

    /// The two fields a request carries to a server that takes this client's attestation: the
    /// attestation from `origin` and a fresh PoP for `audience` (the server's identifier), with
    /// `challenge` when the server gave one — for an authorization server or API other than the
    /// gateway's own routes.
    ///
    /// - Throws: `alg_unsupported` when the signer cannot make PoPs (a shared secret, an App Attest
    ///   install without a proof key, no signer yet).
    public func clientAttestationFields(audience: String, challenge: String? = nil, origin: Origin? = nil) async throws -> MessageFields {
        let attestation = try await clientAttestation(origin: origin)
        return [
            ("OAuth-Client-Attestation", attestation.attestation),
            ("OAuth-Client-Attestation-PoP", try attestationPoP(audience: audience, challenge: challenge)),
        ]
    }

    func usesClientAttestation(_ target: RequestTarget) -> Bool {
        !Self.isSignetEndpoint(target) && Self.path(of: target, isUnder: configuration.clientAttestationPaths)
    }

    /// Sends with the origin's attestation and a PoP; follows a challenge the gateway asks for once,
    /// and replaces an attestation the gateway no longer takes once.
    func sendWithClientAttestation(
        _ method: String,
        _ url: String,
        to origin: Origin,
        fields: MessageFields,
        body: [UInt8]
    ) async throws -> ClientResponse {
        var renewed = false
        var challengeFollowed = false
        while true {
            let attestation = try await clientAttestation(origin: origin)
            guard let audience = configuration.clientAttestationAudience ?? attestation.audience else {
                throw SignetError(.clientAttestationPoPInvalid, "the gateway named no audience: set clientAttestationAudience")
            }
            var carried = fields
            carried.set(name: "OAuth-Client-Attestation", value: attestation.attestation)
            carried.set(name: "OAuth-Client-Attestation-PoP", value: try attestationPoP(audience: audience, challenge: attestationChallenges[origin]))
            let response = try await send(method, url, fields: carried, body: body, sign: false)
            if let challenge = response.fields["OAuth-Client-Attestation-Challenge"] { attestationChallenges[origin] = challenge }
            if !challengeFollowed, response.gatewayRefusal == .clientAttestationChallengeRequired,
                response.fields["OAuth-Client-Attestation-Challenge"] != nil
            {
                challengeFollowed = true
                continue
            }
            guard !renewed, [.clientAttestationExpired, .clientAttestationInvalid].contains(response.gatewayRefusal) else { return response }
            clientAttestations[origin] = nil
            renewed = true
        }
    }

    private func attestationPoP(audience: String, challenge: String?) throws -> String {
        guard let signer = signer as? any ClientAttestationSigning else {
            throw SignetError(.algUnsupported, "this client's signer cannot make client attestation PoPs: a device key is needed")
        }
        return try signer.attestationPoP(audience: audience, challenge: challenge, now: gatewayNow)
    }

    /// Asks `origin` for an attestation of the signer's key; a key other than the registered one
    /// (an App Attest install's proof key) is named in the body, with its consent: a PoP for the
    /// attester's issuing endpoint.
    private func fetchClientAttestation(origin: Origin) async throws -> ClientAttestation {
        let url = origin.description + "/signet/v1/client-attestations"
        var fields: MessageFields = []
        var body: [UInt8] = []
        if let signer = signer as? any ClientAttestationSigning, let named = try signer.namedKey {
            let consent = ClientAttestationPoP.consentAudience(issuer: configuration.attesterIssuer ?? origin.description)
            fields.append(name: "Content-Type", value: "application/json")
            fields.append(name: "OAuth-Client-Attestation-PoP", value: try signer.attestationPoP(audience: consent, challenge: nil, now: gatewayNow))
            body = Array(#"{"jwk":\#(named.jsonString)}"#.utf8)
        }
        let answer = try await send("POST", url, fields: fields, body: body, sign: signer != nil)
        guard answer.status == 201, let object = answer.json, let attestation = object["attestation"] as? String,
            let clientID = object["clientId"] as? String,
            let expires = (object["expiresAt"] as? String).flatMap(Self.parseRFC3339)
        else {
            throw SignetError(
                answer.reason.flatMap(SignetError.Code.init(rawValue:)) ?? .clientAttestationInvalid,
                "no client attestation: \(answer.status) \(answer.text)"
            )
        }
        return ClientAttestation(attestation: attestation, expiresAt: expires, clientID: clientID, audience: object["audience"] as? String)
    }
}
