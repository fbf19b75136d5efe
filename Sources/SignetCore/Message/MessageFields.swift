// SPDX-License-Identifier: Apache-2.0

/// Header (or trailer) field lines in the order received, names compared case-insensitively.
///
/// Kept as lines, not a dictionary: RFC 9421 combines repeated fields in their received order
/// (`;bs` even encodes each line separately), so the order and multiplicity matter.
public struct MessageFields: Sendable, Hashable, Sequence, ExpressibleByArrayLiteral {
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
        lines.compactMap { Self.sameName($0.name, name) ? $0.value : nil }
    }

    public func contains(_ name: String) -> Bool {
        lines.contains { Self.sameName($0.name, name) }
    }

    /// RFC 9110 §5.3 combination with OWS trimmed from each line; `nil` when absent.
    public subscript(name: String) -> String? {
        // By index: iterating the lines would copy (retain and release) every value on the way.
        var combined: String?
        for index in lines.indices where Self.sameName(lines[index].name, name) {
            if combined == nil {
                combined = lines[index].value.trimmingOWS
            } else {
                combined!.append(", ")
                combined!.append(lines[index].value.trimmingOWS)
            }
        }
        return combined
    }

    /// ASCII case-insensitive comparison without allocating (this runs for every field lookup).
    package static func sameName(_ a: String, _ b: String) -> Bool {
        // Most names differ in length: answer without walking them.
        guard a.utf8.count == b.utf8.count else { return false }
        // Native strings lend their bytes; walking two buffers is several times faster than two iterators.
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in equalIgnoringASCIICase(x, y) }
        }
        if let fast, let fast { return fast }
        return equalIgnoringASCIICase(Array(a.utf8), Array(b.utf8))
    }

    private static func equalIgnoringASCIICase(_ x: some RandomAccessCollection<UInt8>, _ y: some RandomAccessCollection<UInt8>) -> Bool {
        for (p, q) in zip(x, y) where p != q {
            let folded = p | 0x20
            guard folded == q | 0x20, folded >= 0x61, folded <= 0x7A else { return false }
        }
        return true
    }

    /// Appends the RFC 9110 §5.3 combination of `name`'s lines (OWS trimmed, joined by `, `) to
    /// `bytes`; `false` when the field is absent. The signature base is built with this, so no
    /// intermediate string is made for the common one-line field.
    func appendCombined(_ name: String, to bytes: inout [UInt8]) -> Bool {
        var found = false
        for index in lines.indices where Self.sameName(lines[index].name, name) {
            if found { bytes += ", ".utf8 }
            found = true
            bytes += lines[index].value.trimmingOWS.utf8
        }
        return found
    }

    public mutating func append(name: String, value: String) {
        lines.append(Field(name: name, value: value))
    }

    public mutating func removeAll(_ name: String) {
        lines.removeAll { Self.sameName($0.name, name) }
    }

    public mutating func set(name: String, value: String) {
        if let index = lines.firstIndex(where: { Self.sameName($0.name, name) }) {
            lines[index].value = value
            lines = lines.enumerated().filter { $0.offset == index || !Self.sameName($0.element.name, name) }
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
    package var trimmingOWS: String {
        // Most values have nothing to trim: answer without copying.
        let isOWS: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        if let first = utf8.first, let last = utf8.last, !isOWS(first), !isOWS(last) { return self }
        let bytes = Array(utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        if start == 0 && end == bytes.count { return self }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
