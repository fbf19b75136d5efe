// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Base64 (RFC 4648 §4) and base64url (§5) with strictness chosen per use.
public enum Base64 {
    /// Standard alphabet, padded.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }

    /// Standard alphabet, strict: padding required and unused bits zero, so each value has exactly
    /// one encoding.
    public static func decode(_ text: String) -> [UInt8]? {
        decode(Array(text.utf8), lenient: false)
    }

    /// Decodes standard base64. `lenient` accepts missing padding and non-zero unused bits, as
    /// RFC 9651 §4.2.7 asks of structured-field parsers.
    static func decode(_ input: [UInt8], lenient: Bool) -> [UInt8]? {
        input.withUnsafeBufferPointer { decode($0, lenient: lenient) }
    }

    /// The decoder over borrowed bytes (every signature and digest on a request goes through it).
    static func decode(_ input: UnsafeBufferPointer<UInt8>, lenient: Bool) -> [UInt8]? {
        decode(input, table: decodeTable, requirePadding: !lenient, zeroUnusedBits: !lenient)
    }

    /// The decoder itself, for either alphabet: `requirePadding` asks a length that is a multiple of
    /// four, `zeroUnusedBits` a last character whose unused bits are zero (one encoding per value).
    private static func decode(_ input: UnsafeBufferPointer<UInt8>, table decodeTable: [UInt8], requirePadding: Bool, zeroUnusedBits: Bool)
        -> [UInt8]?
    {
        var end = input.count
        while end > 0, input.count - end < 2, input[end - 1] == UInt8(ascii: "=") { end -= 1 }
        guard !requirePadding || input.count % 4 == 0 else { return nil }
        guard end % 4 != 1 else { return nil }
        return decodeTable.withUnsafeBufferPointer { table -> [UInt8]? in
            var accumulator: UInt32 = 0
            var bits = 0
            var written = 0
            var valid = true
            let out = [UInt8](unsafeUninitializedCapacity: end / 4 * 3 + 2) { buffer, count in
                // Whole quads first: four table lookups, three bytes out, one validity check.
                var index = 0
                while index + 4 <= end {
                    let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                    let c = table[Int(input[index + 2])], d = table[Int(input[index + 3])]
                    guard (a | b | c | d) & 0x80 == 0 else {
                        valid = false
                        count = 0
                        return
                    }
                    let quad = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buffer[written] = UInt8(truncatingIfNeeded: quad >> 16)
                    buffer[written + 1] = UInt8(truncatingIfNeeded: quad >> 8)
                    buffer[written + 2] = UInt8(truncatingIfNeeded: quad)
                    written += 3
                    index += 4
                }
                while index < end {
                    let value = table[Int(input[index])]
                    guard value != 0xFF else {
                        valid = false
                        count = 0
                        return
                    }
                    accumulator = (accumulator << 6 | UInt32(value)) & 0xFFFFFF
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        buffer[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                        written += 1
                    }
                    index += 1
                }
                count = written
            }
            guard valid else { return nil }
            if zeroUnusedBits, accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
            return out
        }
    }

    private static let decodeTable = table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    private static let urlDecodeTable = table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    private static func table(_ alphabet: String) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.utf8.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }

    /// URL-safe alphabet without padding (JWK, RFC 7515 §2). Byte by byte: every JWT, thumbprint
    /// and nonce goes through it, and String's `replacing` walks characters.
    public static func urlEncode(_ bytes: some Sequence<UInt8>) -> String {
        let standard = Data(bytes).base64EncodedData()
        var out = [UInt8]()
        out.reserveCapacity(standard.count)
        for byte in standard {
            switch byte {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): break
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// URL-safe alphabet; padding optional (where given, the length is a multiple of four); unused
    /// bits zero. Decoded in place over the string's bytes: every JWS on a request goes through it.
    public static func urlDecode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0, table: urlDecodeTable, requirePadding: $0.last == UInt8(ascii: "="), zeroUnusedBits: true) }
    }
}

/// Lowercase hexadecimal, as the seed articles print digests and MACs.
public enum Hex {
    /// The lowercase hex digit of `value` (below 16).
    public static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digit(byte >> 4))
            out.append(digit(byte & 0x0F))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Accepts upper- and lowercase; `nil` on odd length or a non-hex character.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let hi = value(chars[index]), let lo = value(chars[index + 1]) else { return nil }
            out.append(hi << 4 | lo)
            index += 2
        }
        return out
    }

    /// Whether `c` is a hex digit, either case.
    public static func isDigit(_ c: UInt8) -> Bool { value(c) != nil }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
