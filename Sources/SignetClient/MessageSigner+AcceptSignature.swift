// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Signing as a gateway asked in `Accept-Signature` (RFC 9421 §5.1), within what this signer can
/// sign.
extension MessageSigner {
    /// Signs the default components and those of `asked` this signer can cover
    /// (`components(for:asked:)`), under its label, with the parameters it asks for (`created`
    /// and a nonce always; `expires` five minutes on; its `tag`). Its `keyid` and `alg` are the
    /// signer's own.
    public func sign(_ request: HTTPMessage, now: Date, asked: SignatureRequest?) async throws -> HTTPMessage {
        guard let asked, Self.isLabel(asked.label) else { return try sign(request, created: now, nonce: Nonce.random()) }
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

    /// A label as RFC 8941 keys are written, short.
    static func isLabel(_ label: String) -> Bool {
        guard let first = label.utf8.first, (0x61...0x7A).contains(first) || first == UInt8(ascii: "*"), label.utf8.count <= 32 else { return false }
        return label.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || "_-.*".utf8.contains($0) }
    }

    /// The default components of `request`, then those `asked` adds that it can: a plain field the
    /// request carries, or a derived component of a request without parameters. Anything else
    /// (`@status`, `;req`, `;key`, a field the request lacks) is left out, so an answer cannot ask
    /// the client into signatures it cannot make.
    static func components(for request: HTTPMessage, asked: SignatureRequest) -> [ComponentIdentifier] {
        var components = defaultComponents(for: request)
        for component in asked.components where !components.contains(component) && component.parameters.isEmpty {
            let derived = ["@method", "@target-uri", "@authority", "@scheme", "@request-target", "@path", "@query"]
            guard derived.contains(component.name) || (!component.name.hasPrefix("@") && request.containsField(component.name)) else { continue }
            components.append(component)
        }
        return components
    }
}
