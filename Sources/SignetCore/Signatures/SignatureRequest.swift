// SPDX-License-Identifier: Apache-2.0

/// What a server asks a signature to be (RFC 9421 §5.1, `Accept-Signature`): the components to
/// cover and the parameters to include. A server sends it with a `401` for a missing or
/// insufficient signature; a client that reads it signs correctly on its next try instead of
/// guessing from the reason code.
public struct SignatureRequest: Sendable, Hashable {
    /// The refusals a client puts right by signing as the server's `Accept-Signature` asks: no
    /// signature, or one without a component, a parameter, the nonce, the body's digest or the tag
    /// asked for. A server answers these with it, and a client signs once more as it says.
    public static let answeredRefusals: Set<SignetError.Code> = [
        .signatureMissing, .componentNotCovered, .parameterMissing, .nonceMissing, .digestMissing, .digestNotCovered, .tagMismatch,
    ]

    /// The label the signature is asked under.
    public var label: String
    public var components: [ComponentIdentifier]
    /// The signer is asked to include `created`, `expires` and `nonce` (bare flags, RFC 9421 §5.1).
    public var created: Bool
    public var expires: Bool
    public var nonce: Bool
    /// The key, algorithm and tag the signer is asked to use, where the server names them.
    public var keyID: String?
    public var algorithm: String?
    public var tag: String?

    public init(
        label: String,
        components: [ComponentIdentifier],
        created: Bool = false,
        expires: Bool = false,
        nonce: Bool = false,
        keyID: String? = nil,
        algorithm: String? = nil,
        tag: String? = nil
    ) {
        self.label = label
        self.components = components
        self.created = created
        self.expires = expires
        self.nonce = nonce
        self.keyID = keyID
        self.algorithm = algorithm
        self.tag = tag
    }

    /// At most this many requests, and this many components each, are read from a field.
    public static let maximumRequests = 8
    public static let maximumComponents = 32

    /// The `Accept-Signature` field value for `requests`, in order.
    public static func fieldValue(_ requests: [SignatureRequest]) throws -> String {
        var dictionary = SFDictionary()
        for request in requests {
            var parameters = SFParameters()
            // In the order RFC 9421 §5.1's example writes them.
            if let keyID = request.keyID { parameters["keyid"] = .string(keyID) }
            if let algorithm = request.algorithm { parameters["alg"] = .string(algorithm) }
            if request.created { parameters["created"] = .boolean(true) }
            if request.expires { parameters["expires"] = .boolean(true) }
            if request.nonce { parameters["nonce"] = .boolean(true) }
            if let tag = request.tag { parameters["tag"] = .string(tag) }
            dictionary.append(key: request.label, member: .innerList(SFInnerList(request.components.map(\.item), parameters: parameters)))
        }
        return try StructuredFieldSerializer.serialize(dictionary)
    }

    /// The requests of an `Accept-Signature` field value, bounded.
    ///
    /// - Throws: `malformed_header` for a value that is not a dictionary of inner lists of
    ///   component identifiers, or that asks for more than the bounds.
    public static func parse(_ value: String) throws -> [SignatureRequest] {
        let dictionary = try StructuredFieldParser.parseDictionary(value)
        guard dictionary.count <= maximumRequests else {
            throw SignetError(.malformedHeader, "Accept-Signature asks for more than \(maximumRequests) signatures")
        }
        return try dictionary.entries.map { entry in
            guard case .innerList(let list) = entry.member, list.items.count <= maximumComponents else {
                throw SignetError(.malformedHeader, "Accept-Signature member \(entry.key) is not a list of at most \(maximumComponents) components")
            }
            func string(_ name: String) -> String? {
                if case .string(let value)? = list.parameters[name] { return value }
                return nil
            }
            return SignatureRequest(
                label: entry.key,
                components: try list.items.map(ComponentIdentifier.init(item:)),
                created: list.parameters["created"] == .boolean(true),
                expires: list.parameters["expires"] == .boolean(true),
                nonce: list.parameters["nonce"] == .boolean(true),
                keyID: string("keyid"),
                algorithm: string("alg"),
                tag: string("tag")
            )
        }
    }
}
