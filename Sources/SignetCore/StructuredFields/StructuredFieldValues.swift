// SPDX-License-Identifier: Apache-2.0

/// A bare item of an RFC 9651 structured field.
public enum SFBareItem: Sendable, Hashable {
    case integer(Int64)
    /// A decimal, held exactly as thousandths (RFC 9651 allows at most three fractional digits).
    case decimal(thousandths: Int64)
    case string(String)
    case token(String)
    case byteSequence([UInt8])
    case boolean(Bool)
    case date(Int64)
    case displayString(String)
}

/// Ordered parameters; a repeated key overwrites the earlier value in place (RFC 9651 §4.2.3.2).
public struct SFParameters: Sendable, Hashable, Sequence {
    public private(set) var entries: [(key: String, value: SFBareItem)] = []

    public init() {}
    public init(_ entries: [(String, SFBareItem)]) {
        for (key, value) in entries { self[key] = value }
    }

    public subscript(key: String) -> SFBareItem? {
        get { entries.first(where: { $0.key == key })?.value }
        set {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }
    public func makeIterator() -> some IteratorProtocol<(key: String, value: SFBareItem)> { entries.makeIterator() }

    /// For a parser that keeps its own index of keys: a new key at the end, or the value at a
    /// known position replaced (no search either way).
    mutating func set(_ value: SFBareItem, for key: String, at position: Int?) {
        if let position { entries[position].value = value } else { entries.append((key, value)) }
    }

    public static func == (lhs: SFParameters, rhs: SFParameters) -> Bool {
        lhs.entries.elementsEqual(rhs.entries, by: { $0.key == $1.key && $0.value == $1.value })
    }
    public func hash(into hasher: inout Hasher) {
        for entry in entries {
            hasher.combine(entry.key)
            hasher.combine(entry.value)
        }
    }
}

/// An item with its parameters.
public struct SFItem: Sendable, Hashable {
    public var bareItem: SFBareItem
    public var parameters: SFParameters
    public init(_ bareItem: SFBareItem, parameters: SFParameters = SFParameters()) {
        self.bareItem = bareItem
        self.parameters = parameters
    }
}

/// An inner list with its parameters.
public struct SFInnerList: Sendable, Hashable {
    public var items: [SFItem]
    public var parameters: SFParameters
    public init(_ items: [SFItem], parameters: SFParameters = SFParameters()) {
        self.items = items
        self.parameters = parameters
    }
}

/// A member of a list or dictionary.
public enum SFMember: Sendable, Hashable {
    case item(SFItem)
    case innerList(SFInnerList)
}

/// A parsed dictionary that remembers each member's exact bytes as received.
///
/// RFC 9421 needs the raw text of a `Signature-Input` member: the verifier must copy it into
/// `@signature-params` verbatim, never re-serialise it.
public struct SFDictionary: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var member: SFMember
        /// The member value exactly as received (after `key=`), or `nil` when built in code.
        public var rawValue: String?
    }

    public private(set) var entries: [Entry] = []

    public init() {}

    public subscript(key: String) -> Entry? {
        entries.first(where: { $0.key == key })
    }

    public var keys: [String] { entries.map(\.key) }

    mutating func set(_ entry: Entry) {
        set(entry, at: entries.firstIndex(where: { $0.key == entry.key }))
    }

    /// For a parser that keeps its own index of keys (see ``SFParameters``).
    mutating func set(_ entry: Entry, at position: Int?) {
        if let position { entries[position] = entry } else { entries.append(entry) }
    }

    public var count: Int { entries.count }

    public mutating func append(key: String, member: SFMember) {
        set(Entry(key: key, member: member, rawValue: nil))
    }
}
