// SPDX-License-Identifier: Apache-2.0

/// Per-route access: the longest configured prefix that matches the path (and method) decides.
struct RouteTable: Sendable {
    struct Entry: Sendable {
        var prefix: String
        var methods: Set<String>?
        var requirement: AccessRequirement
    }

    let entries: [Entry]

    init(_ routes: [GatewayConfiguration.Route]) throws {
        entries = try routes.map {
            Entry(
                prefix: $0.prefix,
                methods: $0.methods.map { Set($0.map { $0.uppercased() }) },
                requirement: try $0.requirement()
            )
        }
        .sorted { $0.prefix.count > $1.prefix.count }
    }

    /// The requirement for a request; `.verified` when nothing matches (closed by default).
    func requirement(method: String, path: String) -> AccessRequirement {
        for entry in entries where Self.matches(prefix: entry.prefix, path: path) {
            if let methods = entry.methods, !methods.contains(method) { continue }
            return entry.requirement
        }
        return .verified
    }

    /// `/scores` matches `/scores`, `/scores/top` and `/scores?x`, not `/scoresheet`.
    static func matches(prefix: String, path: String) -> Bool {
        guard path.hasPrefix(prefix) else { return false }
        if prefix.hasSuffix("/") || path.count == prefix.count { return true }
        let next = path[path.index(path.startIndex, offsetBy: prefix.count)]
        return next == "/" || next == "?"
    }
}
