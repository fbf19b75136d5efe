// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Base64 (RFC 4648 §4) and base64url (§5) with strictness chosen per use.
public enum Base64 {
    /// Standard alphabet, padded.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }

    /// Standard alphabet; padding required, as structured-field byte sequences send it.
    public static func decode(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text).map(Array.init)
    }

    /// URL-safe alphabet without padding (JWK, RFC 7515 §2).
    public static func urlEncode(_ bytes: some Sequence<UInt8>) -> String {
        String(
            encode(bytes).replacing("+", with: "-").replacing("/", with: "_").prefix { $0 != "=" }
        )
    }

    /// URL-safe alphabet; padding optional.
    public static func urlDecode(_ text: String) -> [UInt8]? {
        guard !text.contains("+"), !text.contains("/") else { return nil }
        var standard = text.replacing("-", with: "+").replacing("_", with: "/")
        guard !standard.contains("=") || standard.count % 4 == 0 else { return nil }
        while standard.count % 4 != 0 { standard += "=" }
        return decode(standard)
    }
}

/// Lowercase hexadecimal, as the seed articles print digests and MACs.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
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

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
