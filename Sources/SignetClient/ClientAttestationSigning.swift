// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// A signer that can prove possession of its key for a Client Attestation
/// (draft-ietf-oauth-attestation-based-client-auth-10): a device key (``DeviceKeyProvider``'s
/// signer, ES256 with the Secure Enclave key) or a `MessageSigner` with an asymmetric key, whose
/// public key the gateway attests in `cnf.jwk`. An App Attest key signs only assertions and a shared
/// secret is no key at all; neither makes PoPs.
public protocol ClientAttestationSigning: RequestSigning {
    /// A Client Attestation PoP for the server named `audience`, with its latest `challenge`.
    func attestationPoP(audience: String, challenge: String?, now: Date) throws -> String
}

extension MessageSigner: ClientAttestationSigning {
    public func attestationPoP(audience: String, challenge: String?, now: Date) throws -> String {
        try ClientAttestationPoP.make(key: key, audience: audience, challenge: challenge, now: now)
    }
}

extension DeviceKeySigner: ClientAttestationSigning {
    func attestationPoP(audience: String, challenge: String?, now: Date) throws -> String {
        try ClientAttestationPoP.make(alg: "ES256", sign: { try key.signature(for: $0) }, audience: audience, challenge: challenge, now: now)
    }
}
