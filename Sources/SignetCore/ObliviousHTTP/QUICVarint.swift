// SPDX-License-Identifier: Apache-2.0

/// QUIC's variable-length integer (RFC 9000 §16), the length prefix of Binary HTTP (RFC 9292): the
/// two high bits of the first byte give the length, 1, 2, 4 or 8 bytes.
enum QUICVarint {
    static let maximum: UInt64 = (1 << 62) - 1

    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        precondition(value <= maximum, "a QUIC varint holds at most 2^62 - 1")
        switch value {
        case 0..<(1 << 6):
            bytes.append(UInt8(value))
        case 0..<(1 << 14):
            bytes.append(0x40 | UInt8(value >> 8))
            bytes.append(UInt8(truncatingIfNeeded: value))
        case 0..<(1 << 30):
            bytes.append(0x80 | UInt8(value >> 24))
            for shift in stride(from: 16, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
        default:
            bytes.append(0xC0 | UInt8(value >> 56))
            for shift in stride(from: 48, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
    }
}

/// Reads a byte array front to back; every read is bounds-checked and throws `malformed_message`.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var isAtEnd: Bool { offset >= bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw Self.truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw Self.truncated }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func uint16() throws -> UInt16 {
        let slice = try take(2)
        return UInt16(slice[slice.startIndex]) << 8 | UInt16(slice[slice.startIndex + 1])
    }

    mutating func varint() throws -> UInt64 {
        let first = try byte()
        let length = 1 << Int(first >> 6)
        var value = UInt64(first & 0x3F)
        for _ in 1..<length { value = value << 8 | UInt64(try byte()) }
        return value
    }

    /// A varint length followed by that many bytes, refused beyond `limit`.
    mutating func lengthPrefixed(limit: Int) throws -> ArraySlice<UInt8> {
        let length = try varint()
        guard length <= UInt64(limit) else {
            throw SignetError(.malformedMessage, "a length of \(length) exceeds the limit of \(limit) bytes")
        }
        return try take(Int(length))
    }

    static var truncated: SignetError { SignetError(.malformedMessage, "the message ends early") }
}
