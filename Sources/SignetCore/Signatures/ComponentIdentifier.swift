// SPDX-License-Identifier: Apache-2.0

/// A covered component: a field name or `@`-derived component name plus its parameters
/// (`sf`, `key`, `bs`, `req`, `tr`, `name`), RFC 9421 §2.
public struct ComponentIdentifier: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// Lowercased field name, or a derived component name such as `@method`.
    public let name: String
    public let parameters: SFParameters
    /// The name has no byte a serialised string must escape (nearly always): written as is.
    private let nameIsPlain: Bool

    /// The serialised identifier as it appears in the signature base and `Signature-Input`.
    ///
    /// Computed on demand: a verifier writes it straight into the base (`appendSerialized(to:)`)
    /// and never needs it as a string.
    public var description: String { Self.serialize(name, parameters) }

    public init(_ name: String, parameters: SFParameters = SFParameters()) {
        self.name = name.lowercased()
        self.parameters = parameters
        self.nameIsPlain = Self.needsNoEscaping(self.name)
    }

    /// A name already known to be lowercase and non-empty, without parameters (parsers use it).
    init(lowercaseName name: String) {
        self.name = name
        self.parameters = SFParameters()
        self.nameIsPlain = Self.needsNoEscaping(name)
    }

    public init(stringLiteral value: String) {
        // Tests and callers may spell parameters: `"@query-param";name="id"` or `content-digest`.
        self = (try? ComponentIdentifier(parsing: value)) ?? ComponentIdentifier(value)
    }

    /// Parses the serialised form `"name";param=value` or the shorthand `name;param`.
    public init(parsing text: String) throws {
        let quoted = text.hasPrefix("\"") ? text : Self.quoteName(text)
        let item = try StructuredFieldParser.parseItem(quoted)
        try self.init(item: item)
    }

    init(item: SFItem) throws {
        guard case .string(let name) = item.bareItem else {
            throw SignetError(.malformedHeader, "a component identifier must be a string")
        }
        guard !name.isEmpty, !name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else {
            throw SignetError(.malformedHeader, "component name \(name.debugDescription) must be lowercase")
        }
        self.name = name
        self.parameters = item.parameters
        self.nameIsPlain = Self.needsNoEscaping(name)
    }

    /// Appends ``description``'s bytes without building the string.
    func appendSerialized(to bytes: inout [UInt8]) {
        // Most identifiers have no parameters, and a valid name needs no escaping: skip the serializer.
        if parameters.isEmpty, nameIsPlain {
            bytes.append(0x22)
            bytes += name.utf8
            bytes.append(0x22)
        } else {
            bytes += description.utf8
        }
    }

    private static func needsNoEscaping(_ name: String) -> Bool {
        let escapes: (UInt8) -> Bool = { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 || $0 > 0x7E }
        return !(name.utf8.withContiguousStorageIfAvailable { $0.contains(where: escapes) } ?? name.utf8.contains(where: escapes))
    }

    private static func serialize(_ name: String, _ parameters: SFParameters) -> String {
        if parameters.isEmpty, needsNoEscaping(name) { return "\"" + name + "\"" }
        return (try? StructuredFieldSerializer.item(SFItem(.string(name), parameters: parameters))) ?? "\"\(name)\""
    }

    public static func == (lhs: ComponentIdentifier, rhs: ComponentIdentifier) -> Bool {
        lhs.name == rhs.name && lhs.parameters == rhs.parameters
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(parameters)
    }

    private static func quoteName(_ text: String) -> String {
        guard let semicolon = text.firstIndex(of: ";") else { return "\"\(text.lowercased())\"" }
        return "\"\(text[..<semicolon].lowercased())\"" + text[semicolon...]
    }

    public var isDerived: Bool { name.hasPrefix("@") }

    /// `;req`: the component comes from the request a response answers (§2.4).
    public var isFromRelatedRequest: Bool { parameters["req"] == .boolean(true) }

    var item: SFItem { SFItem(.string(name), parameters: parameters) }

    // Derived component names of RFC 9421 §2.2.
    public static let method: ComponentIdentifier = "@method"
    public static let targetURI: ComponentIdentifier = "@target-uri"
    public static let authority: ComponentIdentifier = "@authority"
    public static let scheme: ComponentIdentifier = "@scheme"
    public static let requestTarget: ComponentIdentifier = "@request-target"
    public static let path: ComponentIdentifier = "@path"
    public static let query: ComponentIdentifier = "@query"
    public static let status: ComponentIdentifier = "@status"
    public static let contentDigest: ComponentIdentifier = "content-digest"

    public static func queryParameter(_ name: String) -> ComponentIdentifier {
        ComponentIdentifier("@query-param", parameters: SFParameters([("name", .string(name))]))
    }
}
