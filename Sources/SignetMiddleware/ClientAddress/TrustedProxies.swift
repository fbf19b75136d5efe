// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import SignetCore

/// The proxies in front of the gateway (a load balancer, a CDN), and where they say who the client
/// is. Behind one, every request arrives from the balancer's address, and per-source limits would
/// count all clients as one — one attacker could exhaust them for everyone.
///
/// The client address is taken from what a proxy says only when the connection comes from a trusted
/// proxy, and then as nginx's `real_ip_recursive` does: the hops of the forwarding field are read
/// from the right (the nearest proxy appended the last), trusted ones skipped; the first that is not
/// trusted is the client. A client cannot push its own entries past that point, since everything it
/// sent is to the left of what the trusted proxies appended.
public struct TrustedProxies: Sendable {
    /// Where the trusted proxies put the client's address.
    public enum Source: String, Sendable, Codable, CaseIterable {
        /// `X-Forwarded-For: client, proxy1, proxy2` (AWS ALB, nginx, most balancers).
        case xForwardedFor = "x-forwarded-for"
        /// RFC 7239 `Forwarded: for=client, for=proxy1`.
        case forwarded
        /// The PROXY protocol header (v1 text or v2 binary) the balancer sends before anything else
        /// on the connection (HAProxy, AWS NLB, Envoy); the gateway reads it from trusted peers.
        case proxyProtocol = "proxy-protocol"
    }

    public let ranges: [AddressRange]
    public let source: Source

    /// - Throws: `malformed_message` for a range that does not parse.
    public init(_ ranges: [String], source: Source) throws {
        self.ranges = try ranges.map(AddressRange.init(parsing:))
        self.source = source
    }

    public func isTrusted(_ address: IPAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    public func isTrusted(_ text: String?) -> Bool {
        guard let text, let address = IPAddress(text) else { return false }
        return isTrusted(address)
    }

    /// The client's address for a request that reached the gateway from `peer` with `fields`
    /// (header sources only; ``Source/proxyProtocol`` is read from the connection).
    public func client(peer: String?, fields: HTTPFields) -> String? {
        guard isTrusted(peer) else { return peer }
        let hops: [String?]
        switch source {
        case .xForwardedFor: hops = FieldList.members(fields[values: .xForwardedFor]).map(Self.xForwardedForHop)
        case .forwarded: hops = FieldList.members(fields[values: .forwarded]).map(Self.forwardedFor)
        case .proxyProtocol: return peer
        }
        return Self.rightmostUntrusted(hops, isTrusted: isTrusted(_:)) ?? peer
    }

    /// The client's address as a proxy that asks about a request names it in `X-Forwarded-For`: the
    /// rightmost hop, which the asking proxy appended (or, walking left, the first hop `trusted`
    /// does not cover); `nil` when it names no address.
    package static func forwardedClient(_ fields: HTTPFields, trusted: TrustedProxies?) -> String? {
        let hops = FieldList.members(fields[values: .xForwardedFor]).map(Self.xForwardedForHop)
        return rightmostUntrusted(hops) { trusted?.isTrusted($0) ?? false }
    }

    /// From the right: the first hop that is not trusted; the leftmost when every one is. A hop that
    /// is no address (`unknown`, an obfuscated name, garbage) stops the walk at the last proxy that
    /// could be named, or gives `nil` (then the peer is used) when it is the rightmost.
    static func rightmostUntrusted(_ hops: [String?], isTrusted: (IPAddress) -> Bool) -> String? {
        var leftmost: IPAddress?
        for hop in hops.reversed() {
            guard let hop, let address = IPAddress(hop) else { return leftmost.map(\.unmapped.description) }
            guard isTrusted(address) else { return address.unmapped.description }
            leftmost = address
        }
        return leftmost?.unmapped.description
    }

    /// An `X-Forwarded-For` member: an address, perhaps with a port (`192.0.2.1:4711`, `[2001:db8::1]:4711`).
    static func xForwardedForHop(_ member: String) -> String? {
        address(stripping: member)
    }

    /// The `for=` of one RFC 7239 element (`for=192.0.2.60;proto=http`, `for="[2001:db8::1]:4711"`);
    /// `unknown` and obfuscated identifiers are no address.
    static func forwardedFor(_ element: String) -> String? {
        for pair in element.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2,
                String(parts[0]).trimmingOWS.lowercased() == "for"
            else { continue }
            var value = String(parts[1]).trimmingOWS
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return address(stripping: value)
        }
        return nil
    }

    private static func address(stripping value: String) -> String? {
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            return String(value[value.index(after: value.startIndex)..<close])
        }
        // One colon: IPv4 with a port. More: a bare IPv6 address.
        if value.filter({ $0 == ":" }).count == 1 { return String(value.prefix { $0 != ":" }) }
        return value
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let forwarded = HTTPField.Name("Forwarded")!
}
