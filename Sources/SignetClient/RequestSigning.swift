// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Anything that can sign an outgoing request: a device key, a shared secret, an App Attest key.
public protocol RequestSigning: Sendable {
    /// Returns `request` with an RFC 9421 signature (and `Content-Digest` when there is a body).
    func sign(_ request: HTTPMessage, now: Date) async throws -> HTTPMessage
    /// The same, also covering what the server asked for in `Accept-Signature` (RFC 9421 §5.1)
    /// where this signer can; by default as ``sign(_:now:)``.
    func sign(_ request: HTTPMessage, now: Date, asked: SignatureRequest?) async throws -> HTTPMessage
}

extension RequestSigning {
    public func sign(_ request: HTTPMessage, now: Date, asked: SignatureRequest?) async throws -> HTTPMessage {
        try await sign(request, now: now)
    }
}

extension MessageSigner: RequestSigning {
    /// Signs `@method @target-uri` (and `content-digest`) with `created` and a fresh nonce.
    public func sign(_ request: HTTPMessage, now: Date) async throws -> HTTPMessage {
        try sign(request, created: now, nonce: Nonce.random())
    }
}
