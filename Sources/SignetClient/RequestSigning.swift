// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Anything that can sign an outgoing request: a device key, a shared secret, an App Attest key.
public protocol RequestSigning: Sendable {
    /// Returns `request` with an RFC 9421 signature (and `Content-Digest` when there is a body).
    func sign(_ request: HTTPMessage, now: Date) async throws -> HTTPMessage
}

extension MessageSigner: RequestSigning {
    /// Signs `@method @target-uri` (and `content-digest`) with `created` and a fresh nonce.
    public func sign(_ request: HTTPMessage, now: Date) async throws -> HTTPMessage {
        try sign(request, created: now, nonce: Nonce.random())
    }
}
