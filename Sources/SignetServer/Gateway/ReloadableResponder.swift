// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetMiddleware
import Synchronization

/// The gateway's responder, replaceable while it serves: a reload builds a new chain from the new
/// configuration and swaps the reference in one step. A request already inside finishes on the
/// chain it entered; no connection is touched.
public final class ReloadableResponder: HTTPResponder, Sendable {
    public typealias Context = SignetRequestContext
    /// The chain in force. A responder, not a closure: an async closure called per request cost
    /// a twelvefold drop in proxied requests per second (docs/benchmarks.md, 2026-11-26).
    typealias Handler = any HTTPResponder<SignetRequestContext>

    private let current: Mutex<Handler>

    init(_ handler: Handler) {
        current = Mutex(handler)
    }

    public func respond(to request: Request, context: SignetRequestContext) async throws -> Response {
        let handler = current.withLock { $0 }
        return try await handler.respond(to: request, context: context)
    }

    func replace(with handler: Handler) {
        current.withLock { $0 = handler }
    }
}
