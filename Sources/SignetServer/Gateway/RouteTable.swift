// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware

/// The configured access rules: the longest prefix that matches the path (and method) decides.
/// Prefixes match regardless of ASCII case, as the gateway's router does.
///
/// Not a router: the gateway turns the table into Hummingbird routes once, at start
/// (``registrations(methods:)``), each with the gate its access mode calls for, so requests
/// are routed once, by Hummingbird's trie, on the ``RoutingPath``-normalised path.
struct RouteTable: Sendable {
    struct Entry: Sendable {
        var prefix: String
        var methods: Set<String>?
        var access: GatewayConfiguration.Route.Access
        var mode: GatewayConfiguration.Route.Mode
        /// What a request's signature must meet, for modes that take one (``AccessMode/signature``),
        /// looked up once here rather than per request.
        var signature: AccessRequirement?
        /// Whether the route takes keys the request delivers (`Signature-Key`) or points to
        /// (`Signature-Agent`).
        var takesDeliveredKeys = false

        /// What a request's head is screened against (``RouteTable/signature(method:path:deliversKey:)``):
        /// none on a `monitor` route, nor for a key the request delivers where the route takes one.
        func screening(deliversKey: () -> Bool) -> AccessRequirement? {
            if takesDeliveredKeys && deliversKey() { return nil }
            return mode == .monitor ? nil : signature
        }
    }

    /// One Hummingbird route: a path (`/a/b` or `/a/b/**`), a method and what it demands.
    struct Registration: Sendable, Hashable {
        var path: String
        var method: String
        var access: GatewayConfiguration.Route.Access
        var mode: GatewayConfiguration.Route.Mode
    }

    let entries: [Entry]

    init(_ routes: [GatewayConfiguration.Route]) throws {
        entries = try routes.map {
            try Self.checkPrefix($0.prefix)
            // `/scores/` and `/scores` guard the same subtree: the trie does not tell them apart.
            let prefix = $0.prefix.count > 1 && $0.prefix.hasSuffix("/") ? String($0.prefix.dropLast()) : $0.prefix
            return Entry(
                prefix: prefix.lowercased(),
                // HEAD follows GET's rule, as nginx's `limit_except GET` does: it runs the same handler.
                methods: $0.methods.map { Self.withHead(Set($0.map { $0.uppercased() })) },
                access: $0.access,
                mode: $0.mode,
                signature: AccessModeRegistry.mode(named: $0.access.mode)?.signature,
                takesDeliveredKeys: $0.access.options["signatureKey"] != nil || $0.access.options["agents"] != nil
                    || $0.access.mode == "agent"
            )
        }
        .sorted { $0.prefix.count > $1.prefix.count }
        // Two rules for one prefix in different case would each claim the other's requests.
        var seen: [String: Set<String>?] = [:]
        for entry in entries {
            if let methods = seen[entry.prefix], methods == nil || entry.methods == nil || !methods!.isDisjoint(with: entry.methods!) {
                throw ConfigurationError.invalid("routes", "routes: prefix \(entry.prefix.debugDescription) is configured twice")
            }
            seen[entry.prefix] = seen[entry.prefix].map { $0!.union(entry.methods!) } ?? entry.methods
        }
    }

    /// `methods`, with HEAD where GET is.
    static func withHead(_ methods: Set<String>) -> Set<String> {
        methods.contains("GET") ? methods.union(["HEAD"]) : methods
    }

    /// What a request must bring; `verified` when nothing matches (closed by default).
    func access(method: String, path: String) -> GatewayConfiguration.Route.Access {
        entry(method: method, path: path)?.access ?? .verified
    }

    /// What a request's signature must meet before its body is read, for routes that take one;
    /// any signature when nothing matches (the route is `verified`). None on a `monitor` route:
    /// there a request is forwarded whatever its verdict, so nothing is refused from its head.
    ///
    /// A request that delivers its key in `Signature-Key` or names an agent in `Signature-Agent`
    /// (`deliversKey`) to a route that takes such keys is not screened: its key is resolved from the whole `Signature-Input` (and, for a client
    /// attestation, the store), once the request is complete. Every other request is.
    func signature(method: String, path: String, deliversKey: @autoclosure () -> Bool = false) -> AccessRequirement? {
        guard let entry = entry(method: method, path: path) else { return .verified }
        // The request's fields are looked at only for a route that takes delivered keys.
        return entry.screening(deliversKey: deliversKey)
    }

    /// The configured rule that decides the request, where one matches: the event-loop data
    /// plane's one lookup per request (its gate, and whether to screen the head).
    func rule(method: String, path: String) -> Entry? {
        entry(method: method, path: path)
    }

    /// What decides the request — its access and mode — where a configured rule matches.
    func route(method: String, path: String) -> (access: GatewayConfiguration.Route.Access, mode: GatewayConfiguration.Route.Mode)? {
        entry(method: method, path: path).map { ($0.access, $0.mode) }
    }

    /// The rule that decides a request: the longest matching prefix whose methods include it.
    private func entry(method: String, path: String) -> Entry? {
        let path = path.lowercased()
        return entries.first { entry in
            Self.matches(prefix: entry.prefix, path: path) && entry.methods.map { $0.contains(method) } != false
        }
    }

    /// Signet's own endpoints, as routes in logs and metrics: each feature's (a fixed list), so
    /// no path a client makes up becomes a label of its own.
    static let ownEndpoints = FeatureRegistry.types.flatMap { $0.endpoints }

    /// The route of a request as logs and metrics name it: one of ``ownEndpoints``, the
    /// configured prefix, `(other)` for a path no rule names (verified), `/signet/*` for an unknown
    /// path of Signet's.
    ///
    /// - Parameter routedPath: The path as `PathNormalizingResponder` routed it.
    func logName(method: String, routedPath: String) -> String {
        let lowered = routedPath.lowercased()
        if let own = Self.ownEndpoints.first(where: { Self.matches(prefix: $0, path: lowered) }) { return own }
        if lowered.hasPrefix("/signet/") { return "/signet/*" }
        return entry(method: method, path: routedPath)?.prefix ?? "(other)"
    }

    /// `/scores` matches `/scores`, `/scores/`, `/scores/top` and `/scores?x`, not `/scoresheet`.
    ///
    /// Compared by bytes: a routed path is ASCII (``RoutingPath`` keeps anything else escaped), and
    /// `hasPrefix` and `count` walked both strings by Character, for every rule and every one of
    /// Signet's own endpoints, several times a request.
    static func matches(prefix: String, path: String) -> Bool {
        let prefixBytes = prefix.utf8, pathBytes = path.utf8
        guard pathBytes.starts(with: prefixBytes) else { return false }
        let prefixCount = prefixBytes.count
        if prefix == "/" || pathBytes.count == prefixCount { return true }
        let next = pathBytes[pathBytes.index(pathBytes.startIndex, offsetBy: prefixCount)]
        return next == UInt8(ascii: "/") || next == UInt8(ascii: "?")
    }

    /// Every route the trie needs so that it answers as ``access(method:path:)`` does: each
    /// configured prefix and each of its ancestors (Hummingbird's trie does not fall back from a
    /// static segment to a sibling wildcard), as the node itself and as `node/**`.
    func registrations(methods: [String]) -> [Registration] {
        var nodes: Set<String> = ["/"]
        for entry in entries {
            var node = ""
            for segment in entry.prefix.split(separator: "/") {
                node += "/" + segment
                nodes.insert(node)
            }
        }
        var registrations: [Registration] = []
        for node in nodes.sorted() {
            let below = node == "/" ? "/**" : node + "/**"
            // A segment no normalised path can hold stands for "anything below the node".
            let probe = (node == "/" ? "" : node) + "/%00"
            for method in methods {
                registrations.append(registration(path: node, method: method, matching: node))
                registrations.append(registration(path: below, method: method, matching: probe))
            }
        }
        return registrations
    }

    private func registration(path: String, method: String, matching probe: String) -> Registration {
        let entry = entry(method: method, path: probe)
        return Registration(
            path: path,
            method: method,
            access: entry?.access ?? .verified,
            mode: entry?.mode ?? .enforce
        )
    }

    /// First path segments the gateway answers itself.
    static let reservedSegments: Set<String> = ["signet", "healthz", "readyz", "metrics"]

    /// A prefix must be a normalised path (else no request could match it) made of plain segments
    /// (Hummingbird reads `:x`, `*` and `{x}` as patterns).
    static func checkPrefix(_ prefix: String) throws {
        // The gateway's own endpoints are not the upstream's to route.
        // Compared as the router matches: regardless of ASCII case (a `/METRICS` route would be
        // registered over the gateway's own, which Hummingbird answers with a crash).
        let first = prefix.split(separator: "/").first.map(String.init)
        if let first, Self.reservedSegments.contains(first.lowercased()) {
            throw ConfigurationError.invalid("prefix", "prefix: \(prefix.debugDescription) is under the gateway's own /\(first)")
        }
        guard (try? RoutingPath.normalize(prefix)) == prefix, !prefix.contains("?") else {
            throw ConfigurationError.invalid("prefix", "prefix: \(prefix.debugDescription) is not a normalised path")
        }
        for segment in prefix.split(separator: "/")
        where segment.first == ":" || segment.contains(where: { "*{}".contains($0) }) {
            throw ConfigurationError.invalid("prefix", "prefix: \(prefix.debugDescription) has a pattern character (':' '*' '{' '}')")
        }
    }
}
