// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetCore

/// Routes on the path the upstream will act on: wraps a router so that its trie sees the
/// `RoutingPath`-normalised target, and refuses ambiguous paths with `path_ambiguous` before any
/// route is chosen. Hummingbird's router middlewares run after the route is resolved, so this has
/// to sit outside the router.
public struct PathNormalizingResponder<Inner: HTTPResponder>: HTTPResponder
where Inner.Context: SignetRequestContextProtocol {
    public typealias Context = Inner.Context
    let inner: Inner
    let debug: Bool
    let metrics: SignetMetrics?

    public init(_ inner: Inner, debug: Bool = false, metrics: SignetMetrics? = nil) {
        self.inner = inner
        self.debug = debug
        self.metrics = metrics
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        let received = request.head.path ?? "/"
        let normalized: String
        do {
            normalized = try context.signet.routedPath ?? RoutingPath.normalize(received)
        } catch let error as SignetError {
            // The path is what was refused: kept cut to its first 256 bytes, never its query
            // (legacy MACs and tokens travel there).
            metrics?.recordRefusal(error.code, of: request.head, source: context.clientAddress)
            context.signet.accessRecord?.update { $0.reason = error.code.rawValue }
            return ProblemResponse.make(error, debug: debug)
        }
        context.signet.accessRecord?.update { $0.routedPath = normalized }
        guard normalized != received else { return try await inner.respond(to: request, context: context) }
        var head = request.head
        head.path = normalized
        var context = context
        context.signet.receivedTarget = received
        return try await inner.respond(to: Request(head: head, body: request.body), context: context)
    }
}
