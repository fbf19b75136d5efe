// SPDX-License-Identifier: Apache-2.0
import SignetMiddleware
import Testing

@testable import SignetServer

/// The PROXY protocol header, both versions, from the specification's forms, cut anywhere.
@Suite struct ProxyProtocolHeaderTests {
    static let v1 = Array("PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n".utf8)
    static let v1Six = Array("PROXY TCP6 ffff:f::ffff 2001:db8::1 65535 443\r\n".utf8)

    static func v2(command: UInt8 = 0x21, family: UInt8, addresses: [UInt8], tlvs: [UInt8] = []) -> [UInt8] {
        let body = addresses + tlvs
        return ProxyProtocolHeader.v2Signature + [command, family, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    @Test func bothVersionsNameTheSourceAndTheirLength() {
        #expect(ProxyProtocolHeader.parse(Self.v1 + Array("GET".utf8)) == .header(source: IPAddress("255.255.255.255"), length: Self.v1.count))
        #expect(ProxyProtocolHeader.parse(Self.v1Six) == .header(source: IPAddress("ffff:f::ffff"), length: Self.v1Six.count))
        #expect(ProxyProtocolHeader.parse(Array("PROXY UNKNOWN\r\n".utf8)) == .header(source: nil, length: 15))
        let four = Self.v2(family: 0x11, addresses: [203, 0, 113, 7, 192, 0, 2, 1, 0x12, 0x34, 0x01, 0xBB], tlvs: [0x20, 0x00, 0x01, 0x07])
        #expect(ProxyProtocolHeader.parse(four + [0x47]) == .header(source: IPAddress("203.0.113.7"), length: four.count))
        let six = Self.v2(family: 0x21, addresses: [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 11) + [5] + Array(repeating: 0, count: 20))
        #expect(ProxyProtocolHeader.parse(six) == .header(source: IPAddress("2001:db8::5"), length: six.count))
        // LOCAL, AF_UNSPEC and AF_UNIX: the balancer's own connection, no client address.
        let local = Self.v2(command: 0x20, family: 0x00, addresses: [])
        #expect(ProxyProtocolHeader.parse(local) == .header(source: nil, length: 16))
        let unix = Self.v2(family: 0x31, addresses: Array(repeating: 0, count: 216))
        #expect(ProxyProtocolHeader.parse(unix) == .header(source: nil, length: unix.count))
    }

    /// A header that arrives a byte at a time is incomplete until its last byte, then whole.
    @Test func aHeaderCutAnywhereIsIncompleteUntilItsEnd() {
        let four = Self.v2(family: 0x11, addresses: [203, 0, 113, 7, 192, 0, 2, 1, 0, 1, 0, 2])
        for header in [Self.v1, Self.v1Six, four] {
            for cut in 0..<header.count {
                #expect(ProxyProtocolHeader.parse(header[..<cut]) == .incomplete, "cut at \(cut)")
            }
            guard case .header = ProxyProtocolHeader.parse(header) else {
                Issue.record("whole header not read")
                continue
            }
        }
    }

    @Test func anythingElseIsInvalid() {
        let cases: [[UInt8]] = [
            Array("GET / HTTP/1.1\r\n".utf8),
            Array("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n".utf8),
            Array("PROXY TCP4 2001:db8::1 5.6.7.8 1 2\r\n".utf8),
            Array("PROXY TCP4 1.2.3.4 5.6.7.8 1 70000\r\n".utf8),
            Array("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n".utf8),
            Array(("PROXY TCP4 " + String(repeating: "1", count: 100) + "\r\n").utf8),
            ProxyProtocolHeader.v2Signature + [0x11, 0x11, 0x00, 0x0C] + Array(repeating: 0, count: 12),
            ProxyProtocolHeader.v2Signature + [0x2F, 0x11, 0x00, 0x0C] + Array(repeating: 0, count: 12),
            ProxyProtocolHeader.v2Signature + [0x21, 0x11, 0x00, 0x04] + [1, 2, 3, 4],
            ProxyProtocolHeader.v2Signature + [0x21, 0x11, 0xFF, 0xFF],
        ]
        for bytes in cases {
            guard case .invalid = ProxyProtocolHeader.parse(bytes) else {
                Issue.record("accepted: \(String(decoding: bytes, as: UTF8.self).debugDescription)")
                continue
            }
        }
    }
}
