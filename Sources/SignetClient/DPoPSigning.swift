// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// A signer that can also prove possession of its key for a DPoP-bound token (RFC 9449): a device
/// key (``DeviceKeyProvider``'s signer, ES256 with the Secure Enclave key) or a `MessageSigner`
/// with an asymmetric key, or an App Attest install's proof key (an App Attest key signs only
/// assertions): the install's assertion on the token request names it, covering the `DPoP` field.
/// A shared secret is no proof of anything a token could be bound to, and makes no proofs.
public protocol DPoPSigning: RequestSigning {
    /// A proof for one request to `url` carrying `accessToken`, with the server's `nonce` when it
    /// asked for one.
    func dpopProof(method: String, url: String, accessToken: String?, nonce: String?, now: Date) throws -> String
}

extension MessageSigner: DPoPSigning {
    public func dpopProof(method: String, url: String, accessToken: String?, nonce: String?, now: Date) throws -> String {
        try DPoPProof.make(key: key, method: method, url: url, accessToken: accessToken, nonce: nonce, now: now)
    }
}

extension DeviceKeySigner: DPoPSigning {
    func dpopProof(method: String, url: String, accessToken: String?, nonce: String?, now: Date) throws -> String {
        try key.dpopProof(method: method, url: url, accessToken: accessToken, nonce: nonce, now: now)
    }
}

extension AppAttestAssertionSigner: DPoPSigning {
    func dpopProof(method: String, url: String, accessToken: String?, nonce: String?, now: Date) throws -> String {
        try requireProofKey("DPoP proofs").dpopProof(method: method, url: url, accessToken: accessToken, nonce: nonce, now: now)
    }
}

extension DeviceSigningKey {
    /// A DPoP proof (ES256) by this key.
    func dpopProof(method: String, url: String, accessToken: String?, nonce: String?, now: Date) throws -> String {
        try DPoPProof.make(
            publicKey: try VerificationKey(p256X963: publicKey.x963Representation),
            alg: "ES256",
            sign: { try signature(for: $0) },
            method: method,
            url: url,
            accessToken: accessToken,
            nonce: nonce,
            now: now
        )
    }
}
