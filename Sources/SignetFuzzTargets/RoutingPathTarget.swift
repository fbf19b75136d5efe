// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware

extension FuzzTarget {
    /// The request target the gateway routes and forwards on.
    static let routingPath = FuzzTarget(
        "routing-path",
        property: "a normalised path normalises to itself, has no dot-segment, and keeps the query as sent",
        seeds: { _ in
            ["/", "/api/items?x=1", "/public/../api/%61dmin", "/a/./b/", "/%7euser", "/a%2fb", "/a;b", "/%c3%a9"].map { Array($0.utf8) }
        },
        check: { bytes in
            guard let target = text(bytes), let normal = try? RoutingPath.normalize(target) else { return }
            let again = try reparsed(normal) { try RoutingPath.normalize($0) }
            try expect(again == normal, "\(target.debugDescription) normalises to \(normal.debugDescription), then to \(again.debugDescription)")
            let path = normal.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
            try expect(
                !path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == "." || $0 == ".." },
                "\(target.debugDescription) normalises to \(normal.debugDescription), which keeps a dot-segment")
            if let query = target.firstIndex(of: "?") {
                try expect(normal.hasSuffix(target[query...]), "the query of \(target.debugDescription) changed in \(normal.debugDescription)")
            }
        }
    )
}
