// SPDX-License-Identifier: Apache-2.0

/// An IPv4 or IPv6 address, parsed from its text form (RFC 4291 §2.2 for IPv6: `::` compression
/// and a dotted IPv4 tail), with the key a per-source limit counts it under.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    public let bytes: [UInt8]

    public var isIPv4: Bool { bytes.count == 4 }

    /// Parses `192.0.2.1`, `2001:db8::1`, `::ffff:192.0.2.1`; a zone (`%eth0`) or brackets are not
    /// part of an address and are refused.
    public init?(_ text: some StringProtocol) {
        if let v4 = Self.ipv4(Substring(text)) {
            bytes = v4
        } else if let v6 = Self.ipv6(Substring(text)) {
            bytes = v6
        } else {
            return nil
        }
    }

    package init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// What a per-source limit counts this address under: an IPv4 address itself (an IPv4-mapped
    /// IPv6 address as its IPv4 address), an IPv6 address by its /64 — the smallest prefix a
    /// network hands one customer, so one client cannot step around a limit by changing the low bits.
    public var sourceKey: String {
        if let mapped = ipv4Mapped { return mapped.description }
        guard !isIPv4 else { return description }
        return IPAddress(bytes: Array(bytes[..<8]) + Array(repeating: 0, count: 8)).description + "/64"
    }

    /// ``sourceKey`` of an address given as text; text that is no address (a Unix socket's peer)
    /// is its own key, and none is `unknown`.
    public static func sourceKey(_ text: String?) -> String {
        guard let text else { return "unknown" }
        return IPAddress(text)?.sourceKey ?? text
    }

    /// The address as clients and upstreams expect to read it: an IPv4-mapped IPv6 address as its
    /// IPv4 address (`::ffff:192.0.2.7` is `192.0.2.7`, never `::ffff:c000:207`), any other as it is.
    public var unmapped: IPAddress { ipv4Mapped ?? self }

    /// The IPv4 address inside `::ffff:a.b.c.d`, if this is one.
    public var ipv4Mapped: IPAddress? {
        guard bytes.count == 16, bytes[..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else {
            return nil
        }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// Dotted decimal, or RFC 5952 text (lowercase, the longest run of zero groups as `::`).
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        var best: Range<Int>?
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8, groups[end] == 0 { end += 1 }
            if end - index >= 2, (best?.count ?? 0) < end - index { best = index..<end }
            index = end
        }
        let hex = groups.map { String($0, radix: 16) }
        guard let best else { return hex.joined(separator: ":") }
        return hex[..<best.lowerBound].joined(separator: ":") + "::" + hex[best.upperBound...].joined(separator: ":")
    }

    private static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            // No leading zeros: `010` is octal to some parsers and decimal to others.
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                part.count == 1 || part.first != "0", let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func ipv6(_ text: Substring) -> [UInt8]? {
        guard text.count >= 2, text.count <= 45 else { return nil }
        let halves = text.split(separator: "::", omittingEmptySubsequences: false).map(String.init)
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String, allowIPv4Tail: Bool) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var out: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (position, piece) in pieces.enumerated() {
                if position == pieces.count - 1, allowIPv4Tail, piece.contains(".") {
                    guard let v4 = ipv4(piece) else { return nil }
                    out += v4
                    continue
                }
                guard (1...4).contains(piece.count), piece.allSatisfy(\.isHexDigit), let value = UInt16(piece, radix: 16)
                else { return nil }
                out += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
            return out
        }
        if halves.count == 1 {
            guard let all = groups(halves[0], allowIPv4Tail: true), all.count == 16 else { return nil }
            return all
        }
        guard let head = groups(halves[0], allowIPv4Tail: false), let tail = groups(halves[1], allowIPv4Tail: true),
            head.count + tail.count <= 14
        else { return nil }
        return head + Array(repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}
