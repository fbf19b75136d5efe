// SPDX-License-Identifier: Apache-2.0

/// The `application/x-www-form-urlencoded` rules RFC 9421 §2.2.8 uses for `@query-param`: decode
/// each name and value (`+` is a space), then percent-encode everything outside `*-._` and ASCII
/// alphanumerics, writing a space as `%20`.
package enum FormURLEncoding {
    static func pairs(_ query: String) -> [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = reencode(String(parts[0]))
            let value = parts.count > 1 ? reencode(String(parts[1])) : ""
            return (name, value)
        }
    }

    static func reencode(_ text: String) -> String {
        encode(decode(text))
    }

    package static func decode(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(0x20)
            } else if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                let hi = hexValue(bytes[index + 1]), let lo = hexValue(bytes[index + 2])
            {
                out.append(hi << 4 | lo)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return out
    }

    static func encode(_ bytes: [UInt8]) -> String {
        percentEncode(bytes) { $0.isAlpha || $0.isDigit || "*-._".utf8.contains($0) }
    }

    /// `bytes` with every byte `keeping` refuses written `%XX` (uppercase hex). Also for RFC 8187
    /// values and the gateway's `Signet-User`.
    package static func percentEncode(_ bytes: some Sequence<UInt8>, keeping: (UInt8) -> Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            if keeping(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hex digit, either case; `nil` for anything else.
    package static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
