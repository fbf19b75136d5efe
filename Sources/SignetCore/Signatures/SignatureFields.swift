// SPDX-License-Identifier: Apache-2.0

/// The signatures a message carries: its `Signature-Input` and `Signature` dictionaries joined by
/// label (RFC 9421 §4).
public struct SignatureFields: Sendable {
    public struct Entry: Sendable, Equatable {
        public var label: String
        public var parameters: SignatureParameters
        public var signature: [UInt8]
    }

    /// In `Signature-Input` order.
    public let entries: [Entry]

    /// Parses both fields. Every `Signature-Input` member needs a `Signature` member and vice versa.
    ///
    /// - Parameters:
    ///   - fields: The message's fields.
    ///   - maximumBytes: The two fields together may not be longer, so parsing stays bounded.
    public init(_ fields: MessageFields, maximumBytes: Int = 16 * 1024) throws {
        guard let input = fields["signature-input"] else {
            throw SignetError(.signatureMissing, "the message has no Signature-Input field")
        }
        guard let signature = fields["signature"] else {
            throw SignetError(.signatureMissing, "the message has no Signature field")
        }
        guard input.utf8.count + signature.utf8.count <= maximumBytes else {
            throw SignetError(.headerTooLarge, "Signature-Input and Signature exceed \(maximumBytes) bytes")
        }
        if let entry = SingleSignatureScanner.entry(input: input, signature: signature) {
            self.entries = [entry]
        } else {
            self.entries = try Self.parse(input: input, signature: signature)
        }
    }

    /// The general path: both fields through ``StructuredFieldParser``.
    static func parse(input: String, signature: String) throws -> [Entry] {
        let inputs = try StructuredFieldParser.parseDictionary(input)
        let signatures = try StructuredFieldParser.parseDictionary(signature)
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
