// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// A scheme, host and port: the "protection space" a credential or signature may be sent to.
///
/// The client refuses every other origin — a typo in a URL, a redirect to another host, a plain-HTTP
/// downgrade — before anything signed leaves the device.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    public var scheme: String
    public var host: String
    public var port: Int

    public init(scheme: String, host: String, port: Int? = nil) throws {
        let scheme = scheme.lowercased()
        guard scheme == "https" || scheme == "http" else {
            throw SignetError(.originNotAllowed, "only http and https origins exist, not \(scheme.debugDescription)")
        }
        guard !host.isEmpty else { throw SignetError(.originNotAllowed, "an origin needs a host") }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port ?? (scheme == "https" ? 443 : 80)
    }

    /// Parses `https://host[:port]` (a path is ignored).
    public init(_ url: String) throws {
        let target = try RequestTarget(uri: url)
        try self.init(target: target)
    }

    /// The origin a request target goes to.
    public init(target: RequestTarget) throws {
        let (host, port) = try Self.split(authority: target.authority)
        try self.init(scheme: target.scheme, host: host, port: port)
    }

    public var isTLS: Bool { scheme == "https" }

    /// `https://host` or `https://host:port` when the port is not the default.
    public var description: String {
        let defaultPort = isTLS ? 443 : 80
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? "\(scheme)://\(shownHost)" : "\(scheme)://\(shownHost):\(port)"
    }

    /// `host` or `host:port` when the port is not the default: what `Host` carries.
    public var authority: String {
        String(description.dropFirst(scheme.count + 3))
    }

    /// Whether `host` is an IP literal (no SNI, matched against IP SANs).
    var isIPAddress: Bool { Self.isIPLiteral(host) }

    static func isIPLiteral(_ host: String) -> Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
    }

    static func split(authority: String) throws -> (String, Int?) {
        // user:password@host would send a credential to whoever the URL names: refused outright.
        guard !authority.contains("@") else {
            throw SignetError(.originNotAllowed, "credentials in a URL are refused")
        }
        let withoutUserinfo = authority
        if withoutUserinfo.hasPrefix("[") {
            guard let close = withoutUserinfo.firstIndex(of: "]") else {
                throw SignetError(.originNotAllowed, "malformed IPv6 authority \(authority.debugDescription)")
            }
            let host = String(withoutUserinfo[withoutUserinfo.index(after: withoutUserinfo.startIndex)..<close])
            let rest = withoutUserinfo[withoutUserinfo.index(after: close)...]
            return (host, rest.hasPrefix(":") ? try port(rest.dropFirst()) : nil)
        }
        let parts = withoutUserinfo.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw SignetError(.originNotAllowed, "malformed authority \(authority.debugDescription)") }
        return (String(parts[0]), parts.count == 2 ? try port(parts[1]) : nil)
    }

    private static func port(_ text: Substring) throws -> Int {
        guard let port = Int(text), (1...65535).contains(port) else {
            throw SignetError(.originNotAllowed, "bad port \(String(text).debugDescription)")
        }
        return port
    }
}
