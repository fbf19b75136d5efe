// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What RFC 9421's derived request components are computed from (§2.2).
///
/// Values are kept as received: percent-encoding is never normalised, because a verifier must
/// compute exactly what the signer saw.
public struct RequestTarget: Sendable, Hashable {
    /// The request-target forms of RFC 9112 §3.2.
    public enum Form: Sendable, Hashable {
        case origin, absolute, authority, asterisk
    }

    /// Whether `value` is only `host[:port]` as RFC 3986 writes it (a reg-name, an IPv4 address or
    /// a bracketed IPv6 literal): no `/`, `?`, `#`, `@`, space or quote that could move text into a
    /// path or break out of a `Forwarded` parameter.
    public static func isAuthority(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 255
            && value.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || "-._~:[]".utf8.contains(byte)
            }
    }

    public var scheme: String
    /// Host and optional port, as in the URI or `Host` field.
    public var authority: String
    /// The path, percent-encoded as received; empty only for the authority and asterisk forms.
    public var path: String
    /// The query without its `?`; `nil` when the URI has none.
    public var query: String?
    public var form: Form

    public init(scheme: String, authority: String, path: String, query: String?, form: Form = .origin) {
        self.scheme = scheme.lowercased()
        self.authority = authority
        self.path = path
        self.query = query
        self.form = form
    }

    /// Parses an absolute URI `scheme://authority/path?query` (a fragment is dropped).
    public init(uri: String) throws {
        guard let schemeEnd = uri.range(of: "://") else {
            throw SignetError(.malformedMessage, "not an absolute URI: \(uri.debugDescription)")
        }
        let scheme = String(uri[..<schemeEnd.lowerBound])
        guard !scheme.isEmpty, scheme.utf8.allSatisfy({ $0.isAlpha || $0.isDigit || "+-.".utf8.contains($0) }) else {
            throw SignetError(.malformedMessage, "invalid URI scheme in \(uri.debugDescription)")
        }
        var rest = uri[schemeEnd.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = String(rest[..<authorityEnd])
        guard !authority.isEmpty else { throw SignetError(.malformedMessage, "URI has no authority") }
        // RFC 9110 §4.2.4: userinfo is deprecated in http(s) URIs, and `a@b` names host b to one
        // reader and a to another: refused, not signed as an authority.
        guard !authority.contains("@") else {
            throw SignetError(.malformedMessage, "URI has userinfo (\"@\" in the authority): \(uri.debugDescription)")
        }
        let (path, query) = Self.splitPathAndQuery(String(rest[authorityEnd...]))
        // An empty path is "/" (RFC 9110 §4.2.3): one target, one spelling.
        self.init(scheme: scheme, authority: authority, path: path.isEmpty ? "/" : path, query: query, form: .absolute)
    }

    /// Builds the target from an HTTP/1.1 request line's target and the `Host` field.
    public init(requestTarget: String, host: String?, scheme: String) throws {
        if requestTarget == "*" {
            guard let host else { throw SignetError(.malformedMessage, "request has no Host field") }
            self.init(scheme: scheme, authority: host, path: "", query: nil, form: .asterisk)
        } else if requestTarget.hasPrefix("/") {
            guard let host else { throw SignetError(.malformedMessage, "request has no Host field") }
            let (path, query) = Self.splitPathAndQuery(requestTarget)
            self.init(scheme: scheme, authority: host, path: path, query: query, form: .origin)
        } else if requestTarget.contains("://") {
            try self.init(uri: requestTarget)
        } else {
            self.init(scheme: scheme, authority: requestTarget, path: "", query: nil, form: .authority)
        }
    }

    private static func splitPathAndQuery(_ text: String) -> (String, String?) {
        guard let mark = text.firstIndex(of: "?") else { return (text, nil) }
        return (String(text[..<mark]), String(text[text.index(after: mark)...]))
    }

    // MARK: RFC 9421 §2.2 derived values

    /// `@target-uri`: the full target URI (RFC 9110 §7.1).
    public var targetURI: String {
        switch form {
        case .authority, .asterisk: return "\(scheme)://\(authority)"
        case .origin, .absolute:
            return "\(scheme)://\(authority)\(path.isEmpty ? "/" : path)\(query.map { "?" + $0 } ?? "")"
        }
    }

    /// Appends ``targetURI``'s bytes without building the string (the verifier's base does this).
    func appendTargetURI(to bytes: inout [UInt8]) {
        bytes += scheme.utf8
        bytes += "://".utf8
        bytes += authority.utf8
        guard form == .origin || form == .absolute else { return }
        if path.isEmpty { bytes.append(UInt8(ascii: "/")) } else { bytes += path.utf8 }
        if let query {
            bytes.append(UInt8(ascii: "?"))
            bytes += query.utf8
        }
    }

    /// `@authority`: host lowercased, the scheme's default port removed (RFC 9421 §2.2.3).
    public var normalizedAuthority: String {
        var host = authority
        var port: String?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = String(authority[..<colon])
            port = String(authority[authority.index(after: colon)...])
        }
        host = host.lowercased()
        let defaultPort = scheme == "https" ? "443" : scheme == "http" ? "80" : nil
        if let port, !port.isEmpty, port != defaultPort { return "\(host):\(port)" }
        return host
    }

    /// `@request-target`: the target exactly as it appears on the HTTP/1.1 request line.
    public var requestTargetValue: String {
        switch form {
        case .origin: return (path.isEmpty ? "/" : path) + (query.map { "?" + $0 } ?? "")
        case .absolute: return targetURI
        case .authority: return authority
        case .asterisk: return "*"
        }
    }

    /// `@path`: the absolute path, `/` when empty.
    public var pathValue: String { path.isEmpty ? "/" : path }

    /// `@query`: the query with its leading `?`; `?` alone when there is none.
    public var queryValue: String { "?" + (query ?? "") }
}
