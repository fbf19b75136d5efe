// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetMiddleware
import Synchronization

/// One stage of the gateway's responder, replaceable while it serves: a reload builds a new stage
/// from the new configuration and swaps the reference in one step; no connection is touched. A
/// listener has two (`SignetGateway.ListenerResponders`): the entry, which a request takes when
/// its head arrives, and the judging stage, which it takes when it is complete.
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
