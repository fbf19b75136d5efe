// SPDX-License-Identifier: Apache-2.0

/// The signatures a message carries: its `Signature-Input` and `Signature` dictionaries joined by
/// label (RFC 9421 §4).
public struct SignatureFields: Sendable {
    public struct Entry: Sendable, Equatable {
        public var label: String
        public var parameters: SignatureParameters
        public var signature: [UInt8]
    }

    /// What one message's signature fields may hold. Unauthenticated input: without them one header
    /// of 16 KiB carried two thousand components or hundreds of labels, each a cost the gateway paid
    /// before it knew anything about the sender.
    public struct Limits: Sendable, Hashable {
        /// Signatures (members of each field).
        public var signatures: Int
        /// Components one signature covers.
        public var components: Int
        /// Parameters of one signature or one component.
        public var parameters: Int

        public init(signatures: Int, components: Int, parameters: Int) {
            self.signatures = signatures
            self.components = components
            self.parameters = parameters
        }

        /// 8 signatures, 64 components, 16 parameters: a signer rolling keys over attaches two, and
        /// a request has rarely a dozen fields worth covering.
        public static let standard = Limits(signatures: 8, components: 64, parameters: 16)

        var parser: StructuredFieldParser.Limits {
            .init(members: signatures, innerListItems: components, parameters: parameters)
        }
    }

    /// In `Signature-Input` order.
    public let entries: [Entry]

    /// Parses both fields. Every `Signature-Input` member needs a `Signature` member and vice versa.
    ///
    /// - Parameters:
    ///   - fields: The message's fields.
    ///   - maximumBytes: The two fields together may not be longer, so parsing stays bounded.
    ///   - limits: What they may hold, checked while parsing (`malformed_header` past one).
    public init(_ fields: MessageFields, maximumBytes: Int = 16 * 1024, limits: Limits = .standard) throws {
        try self.init(
            input: fields["signature-input"],
            signature: fields["signature"],
            maximumBytes: maximumBytes,
            limits: limits
        )
    }

    /// Parses both fields of `message`.
    ///
    /// - Parameters:
    ///   - message: The message carrying them.
    ///   - maximumBytes: The two fields together may not be longer, so parsing stays bounded.
    ///   - limits: What they may hold, checked while parsing (`malformed_header` past one).
    public init(of message: some HTTPMessageView, maximumBytes: Int = 16 * 1024, limits: Limits = .standard) throws {
        try self.init(
            input: message.combinedField("signature-input"),
            signature: message.combinedField("signature"),
            maximumBytes: maximumBytes,
            limits: limits
        )
    }

    private init(input: String?, signature: String?, maximumBytes: Int, limits: Limits) throws {
        guard let input else {
            throw SignetError(.signatureMissing, "the message has no Signature-Input field")
        }
        guard let signature else {
            throw SignetError(.signatureMissing, "the message has no Signature field")
        }
        guard input.utf8.count + signature.utf8.count <= maximumBytes else {
            throw SignetError(.headerTooLarge, "Signature-Input and Signature exceed \(maximumBytes) bytes")
        }
        if let entry = SingleSignatureScanner.entry(input: input, signature: signature, limits: limits) {
            self.entries = [entry]
        } else {
            self.entries = try Self.parse(input: input, signature: signature, limits: limits)
        }
    }

    /// The general path: both fields through ``StructuredFieldParser``.
    package static func parse(input: String, signature: String, limits: Limits = .standard) throws -> [Entry] {
        let inputs = try StructuredFieldParser.parseDictionary(input, limits: limits.parser)
        let signatures = try StructuredFieldParser.parseDictionary(signature, limits: limits.parser)
        var entries: [Entry] = []
        for member in inputs.entries {
            guard let signed = signatures[member.key] else {
                throw SignetError(.malformedHeader, "Signature has no member \(member.key.debugDescription)")
            }
            guard case .item(let item) = signed.member, case .byteSequence(let bytes) = item.bareItem else {
                throw SignetError(.malformedHeader, "Signature member \(member.key) must be a byte sequence")
            }
            let parameters = try SignatureParameters(member: member.member, rawValue: member.rawValue)
            entries.append(Entry(label: member.key, parameters: parameters, signature: bytes))
        }
        for key in signatures.keys where inputs[key] == nil {
            throw SignetError(.malformedHeader, "Signature-Input has no member \(key.debugDescription)")
        }
        return entries
    }
}
