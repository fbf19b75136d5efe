// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// A signer that can also prove possession of its key for a DPoP-bound token (RFC 9449): a device
/// key (``DeviceKeyProvider``'s signer, ES256 with the Secure Enclave key) or a `MessageSigner`
/// with an asymmetric key. An App Attest key signs only assertions, and a shared secret is no proof
/// of anything a token could be bound to; neither makes proofs.
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
        try DPoPProof.make(
            publicKey: try VerificationKey(p256X963: key.publicKey.x963Representation),
            alg: "ES256",
            sign: { try key.signature(for: $0) },
            method: method,
            url: url,
            accessToken: accessToken,
            nonce: nonce,
            now: now
        )
    }
}
