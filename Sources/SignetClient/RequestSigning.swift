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

    /// Signs the default components and every one `asked` names, under its label, with the
    /// parameters it asks for (`created` and a nonce always; `expires` five minutes on; its `tag`).
    public func sign(_ request: HTTPMessage, now: Date, asked: SignatureRequest?) async throws -> HTTPMessage {
        guard let asked else { return try sign(request, created: now, nonce: Nonce.random()) }
        return try sign(
            request,
            label: asked.label,
            components: Self.components(for: request, asked: asked),
            created: now,
            expires: asked.expires ? now.addingTimeInterval(300) : nil,
            nonce: Nonce.random(),
            tag: asked.tag
        )
    }

    /// The default components of `request`, then those `asked` adds that it has: a field the
    /// request does not carry cannot be covered, so asking for it changes nothing.
    static func components(for request: HTTPMessage, asked: SignatureRequest) -> [ComponentIdentifier] {
        var components = defaultComponents(for: request)
        for component in asked.components where !components.contains(component) {
            guard component.name.hasPrefix("@") || request.containsField(component.name) || component == .contentDigest else { continue }
            components.append(component)
        }
        return components
    }
}
