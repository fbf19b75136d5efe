// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Hummingbird
import SignetAndroid
import SignetCore
import SignetStore

/// `POST /signet/v1/devices/android`: a key from the Android Keystore, registered by its key
/// attestation chain (and, when configured, a Play Integrity verdict).
extension SignetRegistrationRoutes {
    /// `{"challenge": "…", "chain": ["<base64 DER>", …], "integrityToken": "…"}`, leaf first: the
    /// chain the Keystore returned for a P-256 key made with the challenge's UTF-8 bytes as
    /// `attestationChallenge`; with Play Integrity configured, a classic token requested with the
    /// challenge as its nonce.
    func registerAndroid(_ request: inout Request, context: Context) async throws -> Response {
        guard let android else { throw SignetError(.notFound, "Android Key Attestation is not configured") }
        try request.requireJSONContent("a registration")
        let body = try await request.collectBody(upTo: Self.maximumAndroidRegistrationBytes, refusing: "a registration")
        let user = try await passwordLogin(&request, context: context, maximumBodyBytes: Self.maximumAndroidRegistrationBytes)
        guard let object = try? JSONSerialization.jsonObject(with: Data(Array(buffer: body))) as? [String: Any],
            let challenge = object["challenge"] as? String, let texts = object["chain"] as? [String],
            (2...10).contains(texts.count)
        else { throw SignetError(.malformedMessage, "challenge and chain (2 to 10 base64 DER certificates, leaf first) are required") }
        let integrityToken = object["integrityToken"] as? String
        let standardToken: Bool
        switch object["integrityTokenType"] as? String {
        case nil, "classic": standardToken = false
        case "standard": standardToken = true
        default: throw SignetError(.malformedMessage, "integrityTokenType is classic or standard")
        }
        if let check = android.playIntegrity, check.required, integrityToken == nil {
            throw SignetError(.tokenMissing, "this server asks a Play Integrity token (integrityToken) of every Android registration")
        }
        let chain = try texts.enumerated().map { index, text in
            guard let der = Base64.decode(text) ?? Base64.urlDecode(text) else {
                throw SignetError(.malformedMessage, "chain[\(index)] is not base64")
            }
            return der
        }
        // The list first: a gateway that cannot vouch for revocations refuses before the challenge
        // is spent, so the app retries with the same one.
        let status = try android.statusList()
        let now = clock()
        try await consumeChallenge(challenge, now: now)
        let verified = try android.verifier.verify(chain: chain, challenge: Array(challenge.utf8), now: now, status: status)
        // The verdict is bound to this registration by its nonce: the challenge just consumed.
        var verdict: PlayIntegrityVerdict?
        if let integrityToken, let check = android.playIntegrity {
            verdict = try await check.verdict(integrityToken, standard: standardToken, nonce: challenge, now: now)
        }
        let key: VerificationKey
        do {
            key = try VerificationKey(p256X963: P256.Signing.PublicKey(derRepresentation: verified.publicKeyDER).x963Representation)
        } catch {
            throw SignetError(.attestationKeyMismatch, "the attested key is not an EC P-256 key")
        }
        let (keyID, jwk) = try DeviceRegistration.stored(key, algorithm: "ecdsa-p256-sha256")
        let deviceID = "dev_" + Nonce.random()
        var attributes = AndroidAttestationRegistrar.attributes(verified)
        var integrityFlags: [String] = []
        if let verdict, let check = android.playIntegrity {
            integrityFlags = check.policy.environment.flags(verdict)
            attributes.merge(AndroidAttestationRegistrar.attributes(verdict, flags: integrityFlags)) { $1 }
        }
        if let batchGuard = android.batchGuard {
            let batches = verified.issuers.map(AndroidAttestationRegistrar.batchName)
            switch try await batchGuard.admit(batches: batches, key: keyID, now: now) {
            case .normal: break
            case .flagged(let count):
                attributes["attestation_batch_flag"] = "flagged: \(count) devices of this batch in the window"
                metrics.record(outcome: "flagged", reason: SignetError.Code.attestationBatchExceeded.rawValue)
            case .overLimit(let count):
                attributes["attestation_batch_flag"] = "over the blocking limit (shadow mode): \(count) devices of this batch in the window"
                metrics.record(outcome: "flagged", reason: SignetError.Code.attestationBatchExceeded.rawValue)
            }
        }
        try await save(
            DeviceRecord(
                deviceID: deviceID,
                keyID: keyID,
                algorithm: "ecdsa-p256-sha256",
                publicKeyJWK: jwk.jsonString,
                trustLevel: .androidKeyAttestation,
                createdAt: now,
                attributes: attributes,
                user: user?.user
            )
        )
        keyCache?.forget(keyID)
        // Counted once the device is kept: a registration refused after its verdict flagged nothing.
        for flag in integrityFlags { metrics.record(outcome: "flagged", reason: flag) }
        metrics.record(outcome: "attested", reason: nil)
        var answer = [
            "deviceId": deviceID, "keyid": keyID, "trustLevel": TrustLevel.androidKeyAttestation.rawValue,
            "securityLevel": verified.securityLevel.description,
        ]
        if let user { answer["user"] = user.user }
        return try await answered(JSONResponse.make(answer, status: .created), login: user)
    }
}
