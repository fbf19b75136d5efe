// SPDX-License-Identifier: Apache-2.0

/// RFC 9651 §4.1 serialisation. Used for `;sf` and `;key` component values and to write
/// `Signature-Input`, `Signature` and `Content-Digest` fields.
public enum StructuredFieldSerializer {
    public static func serialize(_ dictionary: SFDictionary) throws -> String {
        var out = ""
        for (position, entry) in dictionary.entries.enumerated() {
            if position > 0 { out += ", " }
            out += try key(entry.key)
            if case .item(let item) = entry.member, item.bareItem == .boolean(true) {
                out += try parameters(item.parameters)
            } else {
                out += "="
                out += try member(entry.member)
            }
        }
        return out
    }

    public static func serialize(_ list: [SFMember]) throws -> String {
        try list.map(member).joined(separator: ", ")
    }

    public static func member(_ member: SFMember) throws -> String {
        switch member {
        case .item(let item): return try self.item(item)
        case .innerList(let list): return try innerList(list)
        }
    }

    public static func innerList(_ list: SFInnerList) throws -> String {
        "(" + (try list.items.map(item).joined(separator: " ")) + ")" + (try parameters(list.parameters))
    }

    public static func item(_ item: SFItem) throws -> String {
        try bareItem(item.bareItem) + parameters(item.parameters)
    }

    public static func parameters(_ parameters: SFParameters) throws -> String {
        var out = ""
        for (name, value) in parameters {
            out += ";" + (try key(name))
            if value != .boolean(true) { out += "=" + (try bareItem(value)) }
        }
        return out
    }

    public static func bareItem(_ item: SFBareItem) throws -> String {
        switch item {
        case .integer(let value):
            guard abs(value) <= 999_999_999_999_999 else { throw invalid("integer out of range") }
            return String(value)
        case .decimal(let thousandths):
            guard abs(thousandths) <= 999_999_999_999_999 else { throw invalid("decimal out of range") }
            let sign = thousandths < 0 ? "-" : ""
            let magnitude = abs(thousandths)
            var fraction = String(magnitude % 1000)
            fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
            while fraction.count > 1, fraction.hasSuffix("0") { fraction.removeLast() }
            return "\(sign)\(magnitude / 1000).\(fraction)"
        case .string(let value):
            // Common case first: nothing to escape, nothing to reject.
            if value.utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C }) {
                return "\"" + value + "\""
            }
            var out = "\""
            for byte in value.utf8 {
                guard (0x20...0x7E).contains(byte) else { throw invalid("string holds a non-printable byte") }
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out += "\\" }
                out.unicodeScalars.append(UnicodeScalar(byte))
            }
            return out + "\""
        case .token(let value):
            let bytes = Array(value.utf8)
            guard let first = bytes.first, first.isAlpha || first == UInt8(ascii: "*"),
                bytes.dropFirst().allSatisfy({ $0.isTChar || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "/") })
            else { throw invalid("invalid token") }
            return value
        case .byteSequence(let bytes):
            return ":" + Base64.encode(bytes) + ":"
        case .boolean(let value):
            return value ? "?1" : "?0"
        case .date(let seconds):
            return "@" + (try bareItem(.integer(seconds)))
        case .displayString(let value):
            var out = "%\""
            for byte in value.utf8 {
                if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "\"") || !(0x20...0x7E).contains(byte) {
                    out += "%" + Hex.encode([byte])
                } else {
                    out.unicodeScalars.append(UnicodeScalar(byte))
                }
            }
            return out + "\""
        }
    }

    static func key(_ key: String) throws -> String {
        let bytes = Array(key.utf8)
        guard let first = bytes.first, first.isLowercaseAlpha || first == UInt8(ascii: "*"),
            bytes.allSatisfy({ $0.isLowercaseAlpha || $0.isDigit || "_-.*".utf8.contains($0) })
        else { throw invalid("invalid key \(key.debugDescription)") }
        return key
    }

    private static func invalid(_ reason: String) -> SignetError {
        SignetError(.malformedHeader, "cannot serialise structured field: \(reason)")
    }
}
