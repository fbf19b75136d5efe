// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import SignetMiddleware
import SignetServer

extension FuzzTarget {
    /// The PROXY protocol header (v1 text, v2 binary) a balancer sends at a connection's start.
    static let proxyProtocol = FuzzTarget(
        "proxy-protocol",
        property: "a header is read from its own bytes alone, a cut header is incomplete, and its source address is canonical",
        seeds: { _ in
            let v2 = ProxyProtocolHeader.v2Signature
            return [
                Array("PROXY TCP4 192.0.2.1 198.51.100.1 4711 443\r\nGET / HTTP/1.1\r\n".utf8),
                Array("PROXY TCP6 2001:db8::1 2001:db8::2 4711 443\r\n".utf8),
                Array("PROXY UNKNOWN\r\n".utf8),
                v2 + [0x21, 0x11, 0x00, 0x0C, 192, 0, 2, 1, 198, 51, 100, 1, 0x12, 0x67, 0x01, 0xBB],
                v2 + [0x21, 0x21, 0x00, 0x24] + [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1]
                    + [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [2] + [0x12, 0x67, 0x01, 0xBB],
                v2 + [0x20, 0x00, 0x00, 0x00],
            ]
        },
        check: { bytes in
            guard case .header(let source, let length) = ProxyProtocolHeader.parse(bytes) else { return }
            try expect(length > 0 && length <= bytes.count, "a \(length)-byte header in \(bytes.count) bytes")
            try expect(
                ProxyProtocolHeader.parse(bytes[..<length]) == .header(source: source, length: length),
                "the header of \(bytes) reads differently from its own \(length) bytes")
            for cut in Set([length - 1, length / 2, 12, 6]) where cut >= 0 && cut < length {
                try expect(
                    ProxyProtocolHeader.parse(bytes[..<cut]) == .incomplete,
                    "the first \(cut) bytes of a \(length)-byte header are not incomplete: \(ProxyProtocolHeader.parse(bytes[..<cut]))")
            }
            if let source {
                try expect(IPAddress(source.description) == source, "the source \(source) does not read back from its text")
            }
        }
    )

    /// `Forwarded` (the first byte even) and `X-Forwarded-For` (odd) behind a trusted proxy.
    static let forwarded = FuzzTarget(
        "forwarded",
        property: "a client address comes from the fields only behind a trusted proxy, and is a canonical address",
        seeds: { _ in
            [
                [0] + Array("for=192.0.2.60;proto=http;by=203.0.113.43, for=\"[2001:db8:cafe::17]:4711\"".utf8),
                [0] + Array("for=unknown, For=\"_hidden\", for=10.0.0.7".utf8),
                [1] + Array("203.0.113.195, 2001:db8:85a3::8a2e:370:7334, 10.0.0.2:8080".utf8),
                [1] + Array("::ffff:192.0.2.1, [2001:db8::1]:4711".utf8),
            ]
        },
        check: { bytes in
            guard let kind = bytes.first, let value = text(Array(bytes.dropFirst())) else { return }
            let source: TrustedProxies.Source = kind % 2 == 0 ? .forwarded : .xForwardedFor
            let name = HTTPField.Name(kind % 2 == 0 ? "Forwarded" : "X-Forwarded-For")!
            var fields = HTTPFields()
            fields[name] = value
            let proxies = try TrustedProxies(["10.0.0.0/8", "2001:db8:cafe::/48"], source: source)
            try expect(
                proxies.client(peer: "192.0.2.9", fields: fields) == "192.0.2.9",
                "a client that is no trusted proxy named another address with \(value.debugDescription)")
            guard let client = proxies.client(peer: "10.1.2.3", fields: fields) else {
                throw PropertyViolation(description: "no client address behind a trusted proxy for \(value.debugDescription)")
            }
            guard let address = IPAddress(client) else {
                throw PropertyViolation(description: "\(value.debugDescription) gives the client \(client.debugDescription), not an address")
            }
            try expect(address.unmapped.description == client, "the client \(client) of \(value.debugDescription) is not canonical")
        }
    )
}
