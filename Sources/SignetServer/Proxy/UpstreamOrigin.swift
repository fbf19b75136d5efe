// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware

/// Where the gateway forwards to: scheme, host, port and base path of the `upstream` URL, read once
/// at start by a strict parser of its own.
///
/// The request target the upstream receives is written from these bytes and the routed path
/// (``requestTarget(routedTarget:)``), never by a URL type: Foundation's `URL` reads a path whose
/// escapes are not UTF-8 as empty, and AsyncHTTPClient then sent `/` with the attacker's query to the
/// upstream's root, outside every route.
package struct UpstreamOrigin: Sendable, Equatable {
    enum Scheme: String, Sendable { case http, https }

    var scheme: Scheme
    /// A DNS name or an IPv4 address, or an IPv6 address without brackets.
    var host: String
    var port: Int
    /// The path every request target starts with: empty, or `/api` (no trailing slash).
    var basePath: String

    /// Parses `http(s)://host[:port][/base/path]`; no user info, query or fragment.
    ///
    /// - Throws: a `ConfigurationError` at `upstream` naming what is wrong.
    package init(parsing url: String) throws {
        let text = Substring(url)
        let rest: Substring
        if text.lowercased().hasPrefix("http://") {
            scheme = .http
            rest = text.dropFirst(7)
        } else if text.lowercased().hasPrefix("https://") {
            scheme = .https
            rest = text.dropFirst(8)
        } else {
            throw Self.refusal("upstream must be an http:// or https:// URL")
        }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let path = rest[authorityEnd...]
        guard !authority.contains("@") else { throw Self.refusal("upstream must not carry user information") }
        (host, port) = try Self.hostAndPort(authority, defaultPort: scheme == .https ? 443 : 80)
        guard !path.contains("?"), !path.contains("#") else {
            throw Self.refusal("upstream must not carry a query or fragment")
        }
        var base = String(path)
        while base.hasSuffix("/") { base.removeLast() }
        if !base.isEmpty {
            // The base path obeys the rules routed paths obey, so that base + routed path does too.
            guard (try? RoutingPath.normalize(base)) == base else {
                throw Self.refusal("upstream's path \(base) is not a plain absolute path (no dot-segments, '//' or ';')")
            }
        }
        basePath = base
    }

    /// The `Host` field: `host[:port]`, the port left out when it is the scheme's default.
    package var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == .https ? 443 : 80
        return port == defaultPort ? name : "\(name):\(port)"
    }

    /// The request target for a routed one (`/path?query`, as `RoutingPath.normalize` returned it):
    /// the base path's bytes, then the routed target's, unchanged.
    func requestTarget(routedTarget: String) -> String {
        basePath.isEmpty ? routedTarget : basePath + routedTarget
    }

    private static func hostAndPort(_ authority: Substring, defaultPort: Int) throws -> (String, Int) {
        let host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refusal("upstream has an unclosed '['") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refusal("upstream has text after its IPv6 address") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw refusal("upstream's IPv6 address is not one")
            }
        } else {
            if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty,
                host.utf8.allSatisfy({ byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                        || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                })
            else { throw refusal("upstream's host is not a DNS name or an IP address") }
        }
        guard let portText else { return (host.lowercased(), defaultPort) }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCII), let port = Int(portText),
            (1...65_535).contains(port)
        else { throw refusal("upstream's port is not a number from 1 to 65535") }
        return (host.lowercased(), port)
    }

    /// The operator's mistake, at the `upstream` key: a `ConfigurationError`, never a client's
    /// reason code.
    private static func refusal(_ reason: String) -> ConfigurationError {
        ConfigurationError.invalid("upstream", reason)
    }
}
