// SPDX-License-Identifier: Apache-2.0

extension VerificationPolicy {
    /// What this policy asks of a request's signature (``SignatureRequest``), for a request of
    /// `method`, with a body or not: the first way each of its applicable component rules can be met,
    /// and the parameters it requires.
    public func signatureRequest(method: String, hasBody: Bool, label: String = "sig1") -> SignatureRequest {
        var components: [ComponentIdentifier] = []
        for rule in componentRules where rule.forRequests {
            if let whenBody = rule.whenBody, whenBody != hasBody { continue }
            if let methods = rule.methods, !methods.contains(method.uppercased()) { continue }
            for component in rule.oneOf.first ?? [] where !components.contains(component) { components.append(component) }
        }
        if requireContentDigest, hasBody, !components.contains(.contentDigest) { components.append(.contentDigest) }
        let label: String =
            switch selection {
            case .label(let named): named
            default: label
            }
        var tag: String? = requiredTag
        if case .tag(let selected) = selection { tag = selected }
        return SignatureRequest(
            label: label,
            components: components,
            created: requireCreated,
            expires: requireExpires,
            nonce: requireNonce,
            tag: tag
        )
    }
}
