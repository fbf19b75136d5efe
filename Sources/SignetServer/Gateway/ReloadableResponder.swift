// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetMiddleware
import Synchronization

/// The gateway's responder, replaceable while it serves: a reload builds a new chain from the new
/// configuration and swaps the reference in one step. A request already inside finishes on the
/// chain it entered; no connection is touched.
public final class ReloadableResponder: HTTPResponder, Sendable {
    public typealias Context = SignetRequestContext
    typealias Handler = @Sendable (Request, SignetRequestContext) async throws -> Response

    private let current: Mutex<Handler>

    init(_ handler: @escaping Handler) {
        current = Mutex(handler)
    }

    public func respond(to request: Request, context: SignetRequestContext) async throws -> Response {
        let handler = current.withLock { $0 }
        return try await handler(request, context)
    }

    func replace(with handler: @escaping Handler) {
        current.withLock { $0 = handler }
    }
}
