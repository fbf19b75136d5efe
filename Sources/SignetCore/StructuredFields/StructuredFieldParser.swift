// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A strict, bounded RFC 9651 parser (RFC 8941 plus Date and Display String).
///
/// Bounds: the caller limits the input size; the parser caps members, inner-list items and
/// parameters per container (``Limits``), refusing as soon as one is passed, so no input can make it
/// allocate without limit. Its time is linear in the input: a repeated key (last one wins) is found
/// through an index, not a search. It never recurses beyond one inner-list level.
public struct StructuredFieldParser {
    public static let maximumMembers = 1024

    /// The most a container may hold; past one, parsing stops with `malformed_header`.
    public struct Limits: Sendable, Hashable {
        /// Members of the top-level dictionary or list.
        public var members: Int
        /// Items of one inner list.
        public var innerListItems: Int
        /// Parameters of one item or inner list.
        public var parameters: Int

        public init(members: Int, innerListItems: Int, parameters: Int) {
            self.members = members
            self.innerListItems = innerListItems
            self.parameters = parameters
        }

        public static let general = Limits(members: maximumMembers, innerListItems: maximumMembers, parameters: maximumMembers)
    }

    private let bytes: [UInt8]
    private var index = 0
    private let limits: Limits

    public init(_ fieldValue: String, limits: Limits = .general) {
        self.bytes = Array(fieldValue.utf8)
        self.limits = limits
    }

    // MARK: Top level (RFC 9651 §4.2)

    public static func parseDictionary(_ value: String, limits: Limits = .general) throws -> SFDictionary {
        var parser = StructuredFieldParser(value, limits: limits)
        return try parser.topLevel { try $0.dictionary() }
    }

    public static func parseList(_ value: String) throws -> [SFMember] {
        var parser = StructuredFieldParser(value)
        return try parser.topLevel { try $0.list() }
    }

    public static func parseItem(_ value: String) throws -> SFItem {
        var parser = StructuredFieldParser(value)
        return try parser.topLevel { try $0.item() }
    }

    private mutating func topLevel<T>(_ body: (inout StructuredFieldParser) throws -> T) throws -> T {
        skipSpaces()
        let result = try body(&self)
        skipSpaces()
        guard index == bytes.count else { throw fail("unexpected character after the value") }
        return result
    }

    // MARK: Containers

    private mutating func dictionary() throws -> SFDictionary {
        var result = SFDictionary()
        var positions: [String: Int] = [:]
        var count = 0
        while index < bytes.count {
            let key = try self.key()
            let member: SFMember
            let rawStart: Int
            if peek == UInt8(ascii: "=") {
                index += 1
                rawStart = index
                member = try itemOrInnerList()
            } else {
                rawStart = index
                member = .item(SFItem(.boolean(true), parameters: try parameters()))
            }
            let raw = String(decoding: bytes[rawStart..<index], as: UTF8.self)
            let position = positions[key]
            if position == nil { positions[key] = result.count }
            result.set(.init(key: key, member: member, rawValue: raw), at: position)
            count += 1
            guard count <= limits.members else { throw fail("more than \(limits.members) dictionary members") }
            guard try endOrComma() else { break }
        }
        return result
    }

    private mutating func list() throws -> [SFMember] {
        var result: [SFMember] = []
        while index < bytes.count {
            result.append(try itemOrInnerList())
            guard result.count <= limits.members else { throw fail("more than \(limits.members) list members") }
            guard try endOrComma() else { break }
        }
        return result
    }

    /// After a member: OWS, then the end or a comma followed by another member.
    private mutating func endOrComma() throws -> Bool {
        skipOWS()
        if index == bytes.count { return false }
        guard peek == UInt8(ascii: ",") else { throw fail("expected ',' between members") }
        index += 1
        skipOWS()
        guard index < bytes.count else { throw fail("trailing comma") }
        return true
    }

    private mutating func itemOrInnerList() throws -> SFMember {
        if peek == UInt8(ascii: "(") { return .innerList(try innerList()) }
        return .item(try item())
    }

    private mutating func innerList() throws -> SFInnerList {
        index += 1  // "("
        var items: [SFItem] = []
        while index < bytes.count {
            skipSpaces()
            if peek == UInt8(ascii: ")") {
                index += 1
                return SFInnerList(items, parameters: try parameters())
            }
            items.append(try item())
            guard items.count <= limits.innerListItems else {
                throw fail("more than \(limits.innerListItems) inner-list items")
            }
            guard peek == UInt8(ascii: " ") || peek == UInt8(ascii: ")") else {
                throw fail("expected ' ' or ')' in inner list")
            }
        }
        throw fail("unterminated inner list")
    }

    private mutating func item() throws -> SFItem {
        let bare = try bareItem()
        return SFItem(bare, parameters: try parameters())
    }

    private mutating func parameters() throws -> SFParameters {
        var result = SFParameters()
        var positions: [String: Int] = [:]
        var count = 0
        while peek == UInt8(ascii: ";") {
            index += 1
            skipSpaces()
            let key = try self.key()
            var value = SFBareItem.boolean(true)
            if peek == UInt8(ascii: "=") {
                index += 1
                value = try bareItem()
            }
            let position = positions[key]
            if position == nil { positions[key] = result.count }
            result.set(value, for: key, at: position)
            count += 1
            guard count <= limits.parameters else { throw fail("more than \(limits.parameters) parameters") }
        }
        return result
    }

    private mutating func key() throws -> String {
        guard let first = peek, first.isLowercaseAlpha || first == UInt8(ascii: "*") else {
            throw fail("a key must start with a lowercase letter or '*'")
        }
        let start = index
        while let c = peek, c.isKeyCharacter { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    // MARK: Bare items (RFC 9651 §4.2.3.1)

    private mutating func bareItem() throws -> SFBareItem {
        guard let c = peek else { throw fail("expected an item") }
        switch c {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: ":"): return .byteSequence(try byteSequence())
        case UInt8(ascii: "?"): return .boolean(try boolean())
        case UInt8(ascii: "@"):
            index += 1
            guard case .integer(let seconds) = try number() else { throw fail("a date must be an integer") }
            return .date(seconds)
        case UInt8(ascii: "%"): return .displayString(try displayString())
        case UInt8(ascii: "*"): return .token(token())
        default:
            if c.isAlpha { return .token(token()) }
            throw fail("unexpected character \(String(UnicodeScalar(c)).debugDescription)")
        }
    }

    private mutating func number() throws -> SFBareItem {
        var negative = false
        if peek == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard let first = peek, first.isDigit else { throw fail("expected a digit") }
        var integerDigits = 0
        var integer: Int64 = 0
        while let c = peek, c.isDigit {
            integerDigits += 1
            guard integerDigits <= 15 else { throw fail("integer has more than 15 digits") }
            integer = integer * 10 + Int64(c - UInt8(ascii: "0"))
            index += 1
        }
        guard peek == UInt8(ascii: ".") else { return .integer(negative ? -integer : integer) }
        guard integerDigits <= 12 else { throw fail("decimal has more than 12 integer digits") }
        index += 1
        var fraction: Int64 = 0
        var fractionDigits = 0
        while let c = peek, c.isDigit {
            fractionDigits += 1
            guard fractionDigits <= 3 else { throw fail("decimal has more than 3 fractional digits") }
            fraction = fraction * 10 + Int64(c - UInt8(ascii: "0"))
            index += 1
        }
        guard fractionDigits > 0 else { throw fail("decimal ends with '.'") }
        for _ in fractionDigits..<3 { fraction *= 10 }
        let thousandths = integer * 1000 + fraction
        return .decimal(thousandths: negative ? -thousandths : thousandths)
    }

    private mutating func string() throws -> String {
        index += 1  // opening quote
        // Most strings have no escape: take them straight from the input.
        let start = index
        while let c = peek, c >= 0x20, c <= 0x7E, c != UInt8(ascii: "\\") {
            if c == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: bytes[start..<(index - 1)], as: UTF8.self)
            }
            index += 1
        }
        var out = Array(bytes[start..<index])
        while let c = peek {
            index += 1
            switch c {
            case UInt8(ascii: "\\"):
                guard let next = peek, next == UInt8(ascii: "\\") || next == UInt8(ascii: "\"") else {
                    throw fail("invalid escape in string")
                }
                out.append(next)
                index += 1
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
            case 0x20...0x7E:
                out.append(c)
            default:
                throw fail("string contains a non-printable or non-ASCII byte")
            }
        }
        throw fail("unterminated string")
    }

    private mutating func token() -> String {
        let start = index
        index += 1
        while let c = peek, c.isTChar || c == UInt8(ascii: ":") || c == UInt8(ascii: "/") { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func byteSequence() throws -> [UInt8] {
        index += 1  // opening colon
        let start = index
        while let c = peek, c != UInt8(ascii: ":") {
            guard c.isAlpha || c.isDigit || c == UInt8(ascii: "+") || c == UInt8(ascii: "/") || c == UInt8(ascii: "=")
            else { throw fail("byte sequence contains a non-base64 character") }
            index += 1
        }
        guard peek == UInt8(ascii: ":") else { throw fail("unterminated byte sequence") }
        let encoded = Array(bytes[start..<index])
        index += 1
        guard let decoded = Base64.decode(encoded, lenient: true) else {
            throw fail("byte sequence is not valid base64")
        }
        return decoded
    }

    private mutating func boolean() throws -> Bool {
        index += 1  // "?"
        switch peek {
        case UInt8(ascii: "1"):
            index += 1
            return true
        case UInt8(ascii: "0"):
            index += 1
            return false
        default: throw fail("a boolean is ?0 or ?1")
        }
    }

    private mutating func displayString() throws -> String {
        index += 1  // "%"
        guard peek == UInt8(ascii: "\"") else { throw fail("a display string starts with %\"") }
        index += 1
        var out: [UInt8] = []
        while let c = peek {
            index += 1
            switch c {
            case UInt8(ascii: "%"):
                guard index + 1 < bytes.count, let hi = bytes[index].lowerHexValue,
                    let lo = bytes[index + 1].lowerHexValue
                else { throw fail("invalid percent-encoding in display string") }
                out.append(hi << 4 | lo)
                index += 2
            case UInt8(ascii: "\""):
                guard let text = String(strictUTF8: out) else {
                    throw fail("display string is not UTF-8")
                }
                return text
            case 0x20...0x7E:
                out.append(c)
            default:
                throw fail("display string contains a non-printable byte")
            }
        }
        throw fail("unterminated display string")
    }

    // MARK: Helpers

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpaces() {
        while peek == UInt8(ascii: " ") { index += 1 }
    }

    private mutating func skipOWS() {
        while peek == UInt8(ascii: " ") || peek == UInt8(ascii: "\t") { index += 1 }
    }

    private func fail(_ reason: String) -> SignetError {
        SignetError(.malformedHeader, "structured field: \(reason) at byte \(index)")
    }
}

extension UInt8 {
    var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    var isLowercaseAlpha: Bool { self >= UInt8(ascii: "a") && self <= UInt8(ascii: "z") }
    var isAlpha: Bool { isLowercaseAlpha || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z")) }
    /// RFC 9110 tchar (a switch, not a string search: it runs for every byte of a token).
    var isTChar: Bool {
        switch self {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        // ! # $ % & ' * + - . ^ _ ` | ~
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }
    /// RFC 9651 key characters after the first: lcalpha, DIGIT, `_`, `-`, `.`, `*`.
    var isKeyCharacter: Bool {
        switch self {
        case 0x61...0x7A, 0x30...0x39, 0x5F, 0x2D, 0x2E, 0x2A: true
        default: false
        }
    }
    var lowerHexValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return self - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
