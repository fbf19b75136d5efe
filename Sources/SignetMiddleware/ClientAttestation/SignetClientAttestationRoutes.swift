// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetStore

/// The Client Attester's endpoints (draft-ietf-oauth-attestation-based-client-auth-11):
///
/// - `POST /signet/v1/client-attestations`: a verified device asks for a Client Attestation JWT
///   → `201 {"attestation", "expiresAt", "clientId", "audience"}` (the audience PoPs name on the
///   gateway's routes). The attested key (`cnf.jwk`) is the
///   device's own, or the key the request's body names (`{"jwk": {…}}`, covered by the device's
///   signature) with an `OAuth-Client-Attestation-PoP` by that key whose `aud` is this endpoint
///   under the attester's name (``ClientAttestationIssuer/consentAudience``), claimed once: how an App Attest device, whose key signs only
///   assertions, has a key of its own attested for its proofs. The route goes under whatever
///   middleware establishes the device.
/// - `POST /signet/v1/attestation-challenge`: a fresh challenge (§6.3) →
///   `200 {"attestation_challenge"}`, `Cache-Control: no-store`, and a fresh `DPoP-Nonce` where
///   the gateway takes DPoP proofs in combined mode. Stateless (nothing is stored until a PoP
///   carrying it is taken), so it is open to anyone.
public struct SignetClientAttestationRoutes<Context: SignetRequestContextProtocol>: Sendable {
    public let issuer: ClientAttestationIssuer
    public let verifier: ClientAttestationVerifier
    public let devices: any DeviceStore
    /// What PoPs name as `aud` on the gateway's routes, told to the client with each attestation.
    public let audience: String?
    private let clock: @Sendable () -> Date

    public static var issuingPath: String { "/signet/v1/client-attestations" }
    public static var challengePath: String { "/signet/v1/attestation-challenge" }

    public init(
        issuer: ClientAttestationIssuer,
        verifier: ClientAttestationVerifier,
        devices: any DeviceStore,
        audience: String? = nil,
        clock: @escaping @Sendable () -> Date = Date.init
    ) {
        self.issuer = issuer
        self.verifier = verifier
        self.devices = devices
        self.audience = audience
        self.clock = clock
    }

    /// Adds `POST /signet/v1/client-attestations` to `group`, which must hold the middleware that
    /// verifies the device.
    public func addIssuing(to group: RouterGroup<Context>) {
        group.post(RouterPath(Self.issuingPath)) { request, context -> Response in
            try await issue(request, context: context)
        }
    }

    /// Adds `POST /signet/v1/attestation-challenge`, open to anyone.
    public func addChallenge(to router: Router<Context>) {
        router.post(RouterPath(Self.challengePath)) { _, _ -> Response in
            let challenge = try await verifier.challenge(now: clock())
            var response = try JSONResponse.make(object: ["attestation_challenge": challenge.value], status: .ok)
            response.headers[.cacheControl] = "no-store"
            // Draft -11 §6.3: where DPoP nonces are taken (combined mode), a fresh one too.
            if let nonce = try await verifier.dpopNonce(now: clock()) { response.headers[DPoPVerifier.nonceField] = nonce }
            return response
        }
    }

    private func issue(_ request: Request, context: Context) async throws -> Response {
        guard let identity = context.signet.identity, let deviceID = identity.deviceID else {
            throw SignetError(.trustLevelInsufficient, "client attestations are for registered devices")
        }
        var request = request
        let body = try await request.collectBody(upTo: 4096, refusing: "a client attestation request")
        var named: JWK?
        if body.readableBytes > 0 {
            try request.requireJSONContent("a client attestation request with a body")
            guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
                Set(object.keys).isSubset(of: ["jwk"]),
                let jwk = object["jwk"].flatMap({ try? JSONSerialization.data(withJSONObject: $0) }).flatMap({ try? JWK(json: Array($0)) })
            else {
                throw SignetError(.malformedMessage, #"a client attestation request is empty or {"jwk": {…}}: the public key to attest"#)
            }
            named = jwk
        }
        guard let device = try await devices.device(id: deviceID), device.status == .active else {
            throw SignetError(.keyRevoked, "the device \(deviceID) is revoked")
        }
        let instanceKey = try Self.instanceKey(named: named, device: device, trustLevel: identity.trustLevel)
        if named != nil {
            // The device's word alone would let it attest anyone's public key: the key's holder
            // proves it took part, once.
            let proofs = request.headers[values: ClientAttestationVerifier.proofField]
            guard proofs.count == 1 else {
                throw SignetError(.clientAttestationPoPInvalid, "a key named for attestation comes with one OAuth-Client-Attestation-PoP by it, for \(issuer.consentAudience)")
            }
            _ = try await verifier.possession(
                of: try VerificationKey(jwk: instanceKey),
                proof: proofs[0],
                audience: issuer.consentAudience,
                requireChallenge: false,
                now: clock()
            )
        }
        let (attestation, claims) = try await issuer.issue(
            deviceID: deviceID,
            keyID: device.keyID,
            trustLevel: identity.trustLevel,
            instanceKey: instanceKey,
            now: clock()
        )
        var object = ["attestation": attestation, "expiresAt": JSONResponse.rfc3339(claims.exp), "clientId": claims.sub]
        if let audience { object["audience"] = audience }
        var response = try JSONResponse.make(object: object, status: .created)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The key to attest: the one the request names, else the device's registered key where it can
    /// sign proofs (not an App Attest key, which signs only assertions). A public key of a type a
    /// PoP can use, canonical (its required members only).
    static func instanceKey(named: JWK?, device: DeviceRecord, trustLevel: TrustLevel) throws -> JWK {
        if let named {
            guard !named.hasPrivateMembers else {
                throw SignetError(.invalidKey, "the key to attest holds private key material: send the public key only")
            }
            let key = try VerificationKey(jwk: named)
            guard key.type != .symmetric else { throw SignetError(.invalidKey, "the key to attest is not a public key") }
            return key.jwk
        }
        guard trustLevel != .appAttest else {
            throw SignetError(.algUnsupported, #"an App Attest key signs only assertions: name the key to attest in the body, {"jwk": {…}}"#)
        }
        let key = try VerificationKey(jwk: try JWK(json: Array(device.publicKeyJWK.utf8)))
        guard key.type != .symmetric else { throw SignetError(.algUnsupported, "the device's key cannot sign proofs") }
        return key.jwk
    }
}
