// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// A signer that can prove possession of its key for a Client Attestation
/// (draft-ietf-oauth-attestation-based-client-auth-11): a device key (``DeviceKeyProvider``'s
/// signer, ES256 with the Secure Enclave key) or a `MessageSigner` with an asymmetric key, whose
/// public key the gateway attests in `cnf.jwk`, or an App Attest install's proof key (an App Attest
/// key signs only assertions), which the gateway attests when the install names it. A shared secret
/// is no key at all and makes no PoPs.
public protocol ClientAttestationSigning: RequestSigning {
    /// A Client Attestation PoP for the server named `audience`, with its latest `challenge`.
    func attestationPoP(audience: String, challenge: String?, now: Date) throws -> String
    /// The public key PoPs are made with, when it is not the key the gateway registered: named in
    /// the request for an attestation, with a PoP consenting to it. `nil` (the default) for a
    /// signer whose registered key makes the PoPs.
    var namedKey: JWK? { get throws }
}

extension ClientAttestationSigning {
    public var namedKey: JWK? { nil }
}

extension MessageSigner: ClientAttestationSigning {
    public func attestationPoP(audience: String, challenge: String?, now: Date) throws -> String {
        try ClientAttestationPoP.make(key: key, audience: audience, challenge: challenge, now: now)
    }
}

extension DeviceKeySigner: ClientAttestationSigning {
    func attestationPoP(audience: String, challenge: String?, now: Date) throws -> String {
        try key.attestationPoP(audience: audience, challenge: challenge, now: now)
    }
}

extension AppAttestAssertionSigner: ClientAttestationSigning {
    func attestationPoP(audience: String, challenge: String?, now: Date) throws -> String {
        try requireProofKey("client attestation PoPs").attestationPoP(audience: audience, challenge: challenge, now: now)
    }

    var namedKey: JWK? {
        get throws { try VerificationKey(p256X963: try requireProofKey("client attestation PoPs").publicKey.x963Representation).jwk }
    }
}

extension DeviceSigningKey {
    /// A Client Attestation PoP (ES256) by this key.
    func attestationPoP(audience: String, challenge: String?, now: Date) throws -> String {
        try ClientAttestationPoP.make(alg: "ES256", sign: { try signature(for: $0) }, audience: audience, challenge: challenge, now: now)
    }
}
