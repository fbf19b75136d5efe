// SPDX-License-Identifier: Apache-2.0

/// Header (or trailer) field lines in the order received, names compared case-insensitively.
///
/// Kept as lines, not a dictionary: RFC 9421 combines repeated fields in their received order
/// (`;bs` even encodes each line separately), so the order and multiplicity matter.
public struct HTTPFields: Sendable, Hashable, Sequence, ExpressibleByArrayLiteral {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var lines: [Field]

    public init(_ lines: [Field] = []) { self.lines = lines }
    public init(arrayLiteral elements: (String, String)...) {
        self.lines = elements.map { Field(name: $0.0, value: $0.1) }
    }

    public func makeIterator() -> IndexingIterator<[Field]> { lines.makeIterator() }

    /// Every line's value for `name`, in order; empty when the field is absent.
    public func values(_ name: String) -> [String] {
        lines.compactMap { $0.name.lowercased() == name.lowercased() ? $0.value : nil }
    }

    public func contains(_ name: String) -> Bool {
        lines.contains { $0.name.lowercased() == name.lowercased() }
    }

    /// RFC 9110 §5.3 combination with OWS trimmed from each line; `nil` when absent.
    public subscript(name: String) -> String? {
        let values = values(name)
        return values.isEmpty ? nil : values.map(\.trimmingOWS).joined(separator: ", ")
    }

    public mutating func append(name: String, value: String) {
        lines.append(Field(name: name, value: value))
    }

    public mutating func removeAll(_ name: String) {
        lines.removeAll { $0.name.lowercased() == name.lowercased() }
    }

    public mutating func set(name: String, value: String) {
        if let index = lines.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) {
            lines[index].value = value
            lines = lines.enumerated().filter { $0.offset == index || $0.element.name.lowercased() != name.lowercased() }
                .map(\.element)
        } else {
            lines.append(Field(name: name, value: value))
        }
    }

    /// Total bytes of names and values, to bound what a verifier is willing to parse.
    public var byteCount: Int { lines.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } }
}

extension String {
    /// Without leading and trailing SP and HTAB (RFC 9110 OWS).
    var trimmingOWS: String {
        let bytes = Array(utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        if start == 0 && end == bytes.count { return self }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
