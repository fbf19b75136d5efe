// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// What handling one request learned, for its access log line: written by whoever learns it —
/// the middleware that establishes the identity, the renderer of a refusal, the proxy with the
/// upstream's answer — and read once, when the answer goes out.
///
/// A reference carried in ``SignetRequestState``: Hummingbird hands each middleware its own copy
/// of the context, so a value written below would never reach the log written above.
public final class AccessRecord: Sendable {
    public struct Fields: Sendable {
        /// Who the request came from, once established.
        public var identity: SignetIdentity?
        /// The path as routed (`RoutingPath`-normalised), once `PathNormalizingResponder` made it.
        public var routedPath: String?
        /// The reason code of a refusal.
        public var reason: String?
        /// The upstream's status and how long it took to answer (to its header section).
        public var upstreamStatus: Int?
        public var upstreamSeconds: Double?
        /// On a `monitor` route, what enforcing would have done: `accepted`, or the reason code of
        /// the refusal it would have made.
        public var verdict: String?
    }

    private let fields = Mutex(Fields())

    public init() {}

    public var snapshot: Fields { fields.withLock { $0 } }

    public func update(_ change: (inout Fields) -> Void) {
        fields.withLock { change(&$0) }
    }
}
