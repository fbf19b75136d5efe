// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import PropertyBased
import SignetCore
import SignetMiddleware
import Testing

/// Addresses, ranges and the client behind trusted proxies.
@Suite struct ClientAddressTests {
    @Test(arguments: [
        ("192.0.2.1", "192.0.2.1", "192.0.2.1"),
        ("2001:db8::1", "2001:db8::1", "2001:db8::/64"),
        ("2001:0DB8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1", "2001:db8::/64"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("::ffff:192.0.2.7", "::ffff:c000:207", "192.0.2.7"),
        ("::1", "::1", "::/64"),
        ("::", "::", "::/64"),
        ("fe80::1:2", "fe80::1:2", "fe80::/64"),
    ])
    func addressesParsePrintAndKeyAsLimitsCountThem(_ text: String, _ printed: String, _ key: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.description == printed)
        #expect(address.sourceKey == key)
        #expect(IPAddress(printed) == address)
    }

    @Test(arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.-4", "::1::", "1:2:3:4:5:6:7:8:9", "12345::",
        "g::1", "[::1]", "::1%eth0", "1.2.3.4:80", " 1.2.3.4", "1:2:3:4:5:6:7::8:9", "::ffff:1.2.3", "unknown",
    ])
    func textThatIsNoAddressIsRefused(_ text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func oneIPv6PrefixIsOneSource() {
        let limiter = SourceRateLimiter(limit: 2)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(limiter.allow("2001:db8:1:2::1", now: now))
        #expect(limiter.allow("2001:db8:1:2:ffff:ffff:ffff:ffff", now: now))
        #expect(!limiter.allow("2001:db8:1:2::abcd", now: now), "the same /64")
        #expect(limiter.allow("2001:db8:1:3::1", now: now), "the next /64")
        #expect(limiter.allow("::ffff:198.51.100.1", now: now) && limiter.allow("198.51.100.1", now: now))
        #expect(!limiter.allow("198.51.100.1", now: now), "an IPv4-mapped address is its IPv4 address")
    }

    @Test func rangesContainWhatTheirPrefixCovers() throws {
        let v4 = try AddressRange(parsing: "10.0.0.0/8")
        #expect(v4.contains(IPAddress("10.255.0.1")!) && !v4.contains(IPAddress("11.0.0.1")!))
        #expect(v4.contains(IPAddress("::ffff:10.1.2.3")!))
        let v6 = try AddressRange(parsing: "2001:db8::/32")
        #expect(v6.contains(IPAddress("2001:db8:ffff::1")!) && !v6.contains(IPAddress("2001:db9::1")!))
        #expect(!v6.contains(IPAddress("10.0.0.1")!))
        #expect(try AddressRange(parsing: "192.0.2.7").contains(IPAddress("192.0.2.7")!))
        #expect(try AddressRange(parsing: "0.0.0.0/0").contains(IPAddress("203.0.113.9")!))
        for text in ["10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/8/8", "x/8", "2001:db8::/129", "10.0.0.0/+8"] {
            let error = #expect(throws: SignetError.self, "\(text)") { try AddressRange(parsing: text) }
            #expect(error?.code == .malformedMessage)
        }
    }

    static func fields(_ name: String, _ values: [String]) -> HTTPFields {
        var fields = HTTPFields()
        for value in values { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return fields
    }

    @Test func theClientIsTheRightmostHopThatIsNotATrustedProxy() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "2001:db8:ffff::/48"], source: .xForwardedFor)
        let xff = { (values: [String]) in Self.fields("X-Forwarded-For", values) }
        // Spoofed entries on the left stay on the left.
        #expect(proxies.client(peer: "10.0.0.1", fields: xff(["6.6.6.6, 203.0.113.7"])) == "203.0.113.7")
        #expect(proxies.client(peer: "10.0.0.1", fields: xff(["6.6.6.6", "203.0.113.7, 10.1.1.1"])) == "203.0.113.7")
        #expect(proxies.client(peer: "10.0.0.1", fields: xff(["203.0.113.7:4711"])) == "203.0.113.7")
        #expect(proxies.client(peer: "10.0.0.1", fields: xff(["[2001:db8::7]:4711, 2001:db8:ffff::1"])) == "2001:db8::7")
        // All trusted: the leftmost; none: the peer; garbage where the proxy writes: the peer.
        #expect(proxies.client(peer: "10.0.0.1", fields: xff(["10.9.9.9, 10.0.0.2"])) == "10.9.9.9")
        #expect(proxies.client(peer: "10.0.0.1", fields: HTTPFields()) == "10.0.0.1")
        #expect(proxies.client(peer: "10.0.0.1", fields: xff(["203.0.113.7, nonsense"])) == "10.0.0.1")
        // An untrusted peer's word counts for nothing.
        #expect(proxies.client(peer: "198.51.100.1", fields: xff(["203.0.113.7"])) == "198.51.100.1")

        let forwarded = try TrustedProxies(["10.0.0.0/8"], source: .forwarded)
        let rfc7239 = Self.fields("Forwarded", [#"for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.3"#])
        #expect(forwarded.client(peer: "10.0.0.1", fields: rfc7239) == "2001:db8:cafe::17")
        // `unknown` (or an obfuscated name) stops the walk at the last proxy that could be named.
        #expect(forwarded.client(peer: "10.0.0.1", fields: Self.fields("Forwarded", ["for=unknown, for=10.0.0.3"])) == "10.0.0.3")
        // Each source reads only its own field.
        #expect(forwarded.client(peer: "10.0.0.1", fields: xff(["203.0.113.7"])) == "10.0.0.1")
    }

    /// Whatever a client writes into the field, behind any chain of trusted proxies that each
    /// append their peer, the client found is the address the first proxy saw.
    @Test func noClientChoosesItsOwnAddress() async throws {
        let proxies = try TrustedProxies(["10.0.0.0/8"], source: .xForwardedFor)
        let spoofed = Gen<UInt32>.value().array(of: 0...4).map { words in
            words.map { word -> String in
                switch word % 4 {
                case 0: "10.\(word >> 24 & 0xFF).\(word >> 16 & 0xFF).\(word >> 8 & 0xFF)"
                case 1: "203.0.\(word >> 16 & 0xFF).\(word >> 8 & 0xFF)"
                case 2: "2001:db8::\(String(word >> 8, radix: 16))"
                default: "junk-\(word)"
                }
            }
        }
        await propertyCheck(input: spoofed, Gen<UInt8>.value(), Gen.int(in: 1...3)) { spoofed, host, chain in
            let client = "198.51.100.\(host)"
            let appended = [client] + (1..<chain).map { "10.0.0.\($0)" }
            let value = (spoofed + appended).joined(separator: ", ")
            #expect(proxies.client(peer: "10.0.0.99", fields: Self.fields("X-Forwarded-For", [value])) == client, "\(value)")
        }
    }
}
