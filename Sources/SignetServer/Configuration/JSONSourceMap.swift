// SPDX-License-Identifier: Apache-2.0

/// Where each key of a JSON document is (line and column, 1-based), by key path (`routes[2].access`,
/// the paths ``ConfigurationError`` names), found by a strict scan of the text. The scan is also the
/// syntax check: it refuses what `JSONSerialization` lets through or reports without a position — a
/// trailing comma, a key given twice (the second would silently win), a control character in a
/// string — with the line and column where the text goes wrong. It is the configuration's only
/// parse: ``value`` is the document it read.
package struct JSONSourceMap: Sendable {
    package struct Position: Sendable, Equatable {
        var line: Int
        var column: Int
    }

    /// A configuration is a few kilobytes; this bounds the scan of a wrong file (`--config` a log).
    static let maximumBytes = 4 << 20
    static let maximumDepth = 64

    package private(set) var positions: [String: Position] = [:]
    /// The document.
    package private(set) var value: JSONValue = .null

    package init(_ bytes: [UInt8]) throws {
        guard bytes.count <= Self.maximumBytes else {
            throw ConfigurationError(.syntax, at: "", "the file is over \(Self.maximumBytes >> 20) MiB: not a configuration")
        }
        var scanner = Scanner(bytes: bytes)
        scanner.skipSpace()
        positions[""] = scanner.position
        value = try scanner.value(path: "", depth: 0)
        scanner.skipSpace()
        guard scanner.atEnd else { throw scanner.error("text after the end of the document") }
        positions.merge(scanner.positions) { first, _ in first }
    }

    /// The position of `path`, or of the nearest enclosing key that has one (a missing key is
    /// reported at the object that lacks it).
    func position(nearest path: String) -> Position? {
        var path = path
        while true {
            if let found = positions[path] { return found }
            guard let cut = path.lastIndex(where: { $0 == "." || $0 == "[" }) else { return positions[""] }
            path = String(path[..<cut])
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var column = 1
        var positions: [String: Position] = [:]

        init(bytes: [UInt8]) {
            self.bytes = bytes
            // A UTF-8 byte order mark is not JSON, but editors write it.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        }

        var atEnd: Bool { index >= bytes.count }
        var position: Position { Position(line: line, column: column) }
        var current: UInt8? { atEnd ? nil : bytes[index] }

        func error(_ message: String) -> ConfigurationError {
            var error = ConfigurationError(.syntax, at: "", "not valid JSON: \(message)")
            error.line = line
            error.column = column
            return error
        }

        mutating func advance() {
            if bytes[index] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if bytes[index] & 0xC0 != 0x80 {
                column += 1  // a character, not each byte of one
            }
            index += 1
        }

        mutating func skipSpace() {
            while let byte = current, [0x20, 0x09, 0x0A, 0x0D].contains(byte) { advance() }
        }

        mutating func expect(_ character: Character) throws {
            guard current == character.asciiValue else { throw error("expected \(character)\(found)") }
            advance()
        }

        var found: String {
            guard let byte = current else { return ", found the end of the file" }
            return byte >= 0x20 && byte < 0x7F ? ", found \(Character(UnicodeScalar(byte)))" : ""
        }

        mutating func value(path: String, depth: Int) throws -> JSONValue {
            guard depth < JSONSourceMap.maximumDepth else { throw error("nested deeper than \(JSONSourceMap.maximumDepth)") }
            guard let byte = current else { throw error("expected a value, found the end of the file") }
            switch byte {
            case UInt8(ascii: "{"): return try object(path: path, depth: depth)
            case UInt8(ascii: "["): return try array(path: path, depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw error("expected a value\(found)")
            }
        }

        mutating func object(path: String, depth: Int) throws -> JSONValue {
            advance()
            skipSpace()
            if current == UInt8(ascii: "}") {
                advance()
                return .object([])
            }
            var seen: Set<String> = []
            var members: [(key: String, value: JSONValue)] = []
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else {
                    throw error(current == UInt8(ascii: "}") ? "a comma before }" : "expected a key in quotes\(found)")
                }
                let at = position
                let key = try string()
                guard seen.insert(key).inserted else {
                    var duplicate = error("\(key.debugDescription) is given twice in this object")
                    (duplicate.line, duplicate.column) = (at.line, at.column)
                    throw duplicate
                }
                let keyPath = path.isEmpty ? key : path + "." + key
                positions[keyPath] = at
                skipSpace()
                try expect(":")
                skipSpace()
                members.append((key, try value(path: keyPath, depth: depth + 1)))
                skipSpace()
                if current == UInt8(ascii: ",") {
                    advance()
                    continue
                }
                try expect("}")
                return .object(members)
            }
        }

        mutating func array(path: String, depth: Int) throws -> JSONValue {
            advance()
            skipSpace()
            if current == UInt8(ascii: "]") {
                advance()
                return .array([])
            }
            var element = 0
            var elements: [JSONValue] = []
            while true {
                skipSpace()
                if current == UInt8(ascii: "]") { throw error("a comma before ]") }
                let elementPath = "\(path)[\(element)]"
                positions[elementPath] = position
                elements.append(try value(path: elementPath, depth: depth + 1))
                element += 1
                skipSpace()
                if current == UInt8(ascii: ",") {
                    advance()
                    continue
                }
                try expect("]")
                return .array(elements)
            }
        }

        /// A string, escapes decoded (`"a\u0062"` is the key `ab`: a duplicate of `"ab"`), refused
        /// unless it is UTF-8 — as Foundation, which reads the values, would refuse it.
        mutating func string() throws -> String {
            advance()
            var text: [UInt8] = []
            while true {
                guard let byte = current else { throw error("a string that does not end") }
                switch byte {
                case UInt8(ascii: "\""):
                    guard let string = String(validating: text, as: UTF8.self) else { throw error("a string that is not UTF-8") }
                    advance()
                    return string
                case UInt8(ascii: "\\"):
                    advance()
                    guard let escaped = current else { throw error("a string that does not end") }
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
                    case UInt8(ascii: "b"): text.append(0x08)
                    case UInt8(ascii: "f"): text.append(0x0C)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "u"): text += try unicodeEscape()
                    default: throw error("an unknown escape in a string")
                    }
                    advance()
                case 0..<0x20:
                    throw error("a control character (a line break?) inside a string")
                default:
                    text.append(byte)
                    advance()
                }
            }
        }

        /// `\uXXXX` (the scanner on the `u`), a surrogate pair as one: the scalar's UTF-8, ending on
        /// the last hex digit. A lone surrogate is refused, as Foundation refuses it.
        private mutating func unicodeEscape() throws -> [UInt8] {
            var value = try hexQuad()
            if (0xD800..<0xDC00).contains(value) {
                advance()
                guard current == UInt8(ascii: "\\") else { throw error("a lone surrogate in a \\u escape") }
                advance()
                guard current == UInt8(ascii: "u") else { throw error("a lone surrogate in a \\u escape") }
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in a \\u escape") }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(value) else { throw error("a lone surrogate in a \\u escape") }
            return Array(String(Character(scalar)).utf8)
        }

        /// Four hex digits after the current byte, the scanner left on the last.
        private mutating func hexQuad() throws -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                advance()
                guard let digit = current, digit.isHexDigit, let nibble = UInt32(String(UnicodeScalar(digit)), radix: 16) else {
                    throw error("\\u needs four hex digits")
                }
                value = value << 4 | nibble
            }
            return value
        }

        mutating func literal(_ word: String) throws {
            for expected in word.utf8 {
                guard current == expected else { throw error("expected \(word)") }
                advance()
            }
        }

        /// A number's text, refused where Foundation refuses it too: beyond what a Double holds (`1E400`).
        mutating func number() throws -> String {
            let (start, startLine, startColumn) = (index, line, column)
            if current == UInt8(ascii: "-") { advance() }
            guard let first = current, first.isDigit else { throw error("expected a digit") }
            advance()
            if first != UInt8(ascii: "0") { while current?.isDigit == true { advance() } }
            if current == UInt8(ascii: ".") {
                advance()
                guard current?.isDigit == true else { throw error("expected a digit after the decimal point") }
                while current?.isDigit == true { advance() }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                advance()
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { advance() }
                guard current?.isDigit == true else { throw error("expected a digit in the exponent") }
                while current?.isDigit == true { advance() }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let value = Double(text), value.isFinite else {
                var outOfRange = error("a number too large to be represented")
                (outOfRange.line, outOfRange.column) = (startLine, startColumn)
                throw outOfRange
            }
            return text
        }
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
    fileprivate var isHexDigit: Bool {
        isDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
