// SPDX-License-Identifier: Apache-2.0
import SignetMiddleware

/// The PROXY protocol header (HAProxy's "The PROXY protocol", versions 1 and 2) a balancer sends at
/// the start of a connection to say whose it is: the source address the gateway then counts the
/// client under.
package enum ProxyProtocolHeader: Equatable {
    /// The header, `length` bytes long; `source` is `nil` for `LOCAL` (v2) and `UNKNOWN` (v1): the
    /// balancer's own connection, a health check.
    case header(source: IPAddress?, length: Int)
    /// Not enough bytes yet to tell.
    case incomplete
    /// Not a PROXY header, or a malformed one.
    case invalid(String)

    package static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    /// v1 is at most 107 bytes (§2.1); v2 addresses and TLVs are bounded here to 4 KiB.
    package static let maximumLength = 16 + 4096

    package static func parse(_ bytes: some Collection<UInt8>) -> ProxyProtocolHeader {
        let bytes = Array(bytes.prefix(maximumLength))
        if bytes.count < 12 {
            let v1 = Array("PROXY ".utf8)
            let prefix = min(bytes.count, 6)
            if bytes[..<prefix].elementsEqual(v1[..<prefix]) || bytes.elementsEqual(v2Signature[..<bytes.count]) {
                return .incomplete
            }
            return .invalid("the connection does not start with a PROXY protocol header")
        }
        if bytes.starts(with: v2Signature) { return v2(bytes) }
        if bytes.starts(with: Array("PROXY ".utf8)) { return v1(bytes) }
        return .invalid("the connection does not start with a PROXY protocol header")
    }

    /// `PROXY TCP4 192.0.2.1 198.51.100.1 56324 443\r\n`, or `PROXY UNKNOWN …\r\n`.
    private static func v1(_ bytes: [UInt8]) -> ProxyProtocolHeader {
        guard let end = bytes.firstIndex(of: 0x0A) else {
            return bytes.count >= 107 ? .invalid("a v1 header longer than 107 bytes") : .incomplete
        }
        guard end <= 106, end > 0, bytes[end - 1] == 0x0D else { return .invalid("a v1 header must end in CRLF within 107 bytes") }
        let line = String(decoding: bytes[..<(end - 1)], as: UTF8.self)
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count >= 2, fields[0] == "PROXY" else { return .invalid("a v1 header starts with PROXY") }
        if fields[1] == "UNKNOWN" { return .header(source: nil, length: end + 1) }
        guard fields.count == 6, fields[1] == "TCP4" || fields[1] == "TCP6", let source = IPAddress(fields[2]),
            IPAddress(fields[3]) != nil, source.isIPv4 == (fields[1] == "TCP4"),
            [fields[4], fields[5]].allSatisfy({ UInt16($0) != nil })
        else { return .invalid("a v1 header needs TCP4 or TCP6, two addresses and two ports") }
        return .header(source: source, length: end + 1)
    }

    /// The 12-byte signature, version and command, family and protocol, a 2-byte length, addresses.
    private static func v2(_ bytes: [UInt8]) -> ProxyProtocolHeader {
        guard bytes.count >= 16 else { return .incomplete }
        let versionCommand = bytes[12]
        guard versionCommand >> 4 == 2 else { return .invalid("a v2 header of version \(versionCommand >> 4)") }
        let length = Int(bytes[14]) << 8 | Int(bytes[15])
        guard 16 + length <= maximumLength else { return .invalid("a v2 header longer than \(maximumLength) bytes") }
        guard bytes.count >= 16 + length else { return .incomplete }
        switch versionCommand & 0x0F {
        case 0x0: return .header(source: nil, length: 16 + length)  // LOCAL
        case 0x1: break  // PROXY
        default: return .invalid("a v2 header with an unknown command")
        }
        let body = bytes[16..<(16 + length)]
        switch bytes[13] >> 4 {
        case 0x1:  // AF_INET: source, destination, ports
            guard body.count >= 12 else { return .invalid("a v2 IPv4 header shorter than its addresses") }
            return .header(source: IPAddress(bytes: Array(body.prefix(4))), length: 16 + length)
        case 0x2:  // AF_INET6
            guard body.count >= 36 else { return .invalid("a v2 IPv6 header shorter than its addresses") }
            return .header(source: IPAddress(bytes: Array(body.prefix(16))), length: 16 + length)
        case 0x0:  // AF_UNSPEC: the receiver must ignore the addresses
            return .header(source: nil, length: 16 + length)
        default:  // AF_UNIX has no address to count a client under
            return .header(source: nil, length: 16 + length)
        }
    }
}
