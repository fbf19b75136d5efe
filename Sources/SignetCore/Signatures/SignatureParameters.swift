// SPDX-License-Identifier: Apache-2.0

/// The covered components and metadata of one signature: one `Signature-Input` member (RFC 9421 §2.3).
public struct SignatureParameters: Sendable, Hashable {
    public var components: [ComponentIdentifier]
    /// Unix seconds.
    public var created: Int64?
    /// Unix seconds.
    public var expires: Int64?
    public var nonce: String?
    public var algorithm: String?
    public var keyID: String?
    public var tag: String?

    /// The member exactly as received; when set, it is the `@signature-params` value (never
    /// re-serialised, so parameter order and spelling stay the signer's).
    public internal(set) var rawValue: String?

    public init(
        components: [ComponentIdentifier],
        created: Int64? = nil,
        expires: Int64? = nil,
        nonce: String? = nil,
        algorithm: String? = nil,
        keyID: String? = nil,
        tag: String? = nil
    ) {
        self.components = components
        self.created = created
        self.expires = expires
        self.nonce = nonce
        self.algorithm = algorithm
        self.keyID = keyID
        self.tag = tag
    }

    /// Parses a received `Signature-Input` member and keeps its raw text.
    init(member: SFMember, rawValue: String?) throws {
        guard case .innerList(let list) = member else {
            throw SignetError(.malformedHeader, "a Signature-Input member must be an inner list")
        }
        self.components = try list.items.map(ComponentIdentifier.init(item:))
        // Equal name and parameters (in order) is equal serialised text. A set: linear in the list.
        var seen = Set<ComponentIdentifier>(minimumCapacity: components.count)
        for component in components where !seen.insert(component).inserted {
            throw SignetError(.malformedHeader, "a component is covered twice")
        }
        for (key, value) in list.parameters {
            switch (key, value) {
            case ("created", .integer(let seconds)): created = seconds
            case ("expires", .integer(let seconds)): expires = seconds
            case ("nonce", .string(let text)): nonce = text
            case ("alg", .string(let text)): algorithm = text
            case ("keyid", .string(let text)): keyID = text
            case ("tag", .string(let text)): tag = text
            case ("created", _), ("expires", _):
                throw SignetError(.malformedHeader, "\(key) must be an integer")
            case ("nonce", _), ("alg", _), ("keyid", _), ("tag", _):
                throw SignetError(.malformedHeader, "\(key) must be a string")
            default:
                break  // Unknown parameters are covered by the raw value and otherwise ignored.
            }
        }
        self.rawValue = rawValue
    }

    /// The `@signature-params` value: the received text, or the serialisation in the order
    /// created, expires, nonce, alg, keyid, tag.
    public var serialized: String {
        get throws {
            if let rawValue { return rawValue }
            var parameters = SFParameters()
            if let created { parameters["created"] = .integer(created) }
            if let expires { parameters["expires"] = .integer(expires) }
            if let nonce { parameters["nonce"] = .string(nonce) }
            if let algorithm { parameters["alg"] = .string(algorithm) }
            if let keyID { parameters["keyid"] = .string(keyID) }
            if let tag { parameters["tag"] = .string(tag) }
            return try StructuredFieldSerializer.innerList(SFInnerList(components.map(\.item), parameters: parameters))
        }
    }
}
