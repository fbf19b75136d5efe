// SPDX-License-Identifier: Apache-2.0
import HummingbirdCore
import SignetCore
import SignetMiddleware
import Synchronization

/// Requests in progress per client where a connection carries many of them — behind trusted
/// proxies (one connection, many clients) and over HTTP/2 (one connection, many streams) — and the
/// connection limit per address (``ConnectionLimits``) cannot tell them apart: past `perClient` a
/// client's next request is refused `429 connection_limit` until one of its own ends (nginx's
/// `limit_conn` keyed by the real client address).
///
/// A request ends when its answer's last byte is written, not when its handler returns: an HTTP/2
/// client that never opens its flow-control window would otherwise hold an upstream connection
/// per stream past the count.
///
/// A client is an IPv4 address or an IPv6 /64 (``IPAddress/sourceKey``). Shared by every
/// configuration a reload makes, so a reload never forgets what is in progress.
final class ClientRequestLimiter: Sendable {
    private let inProgress = ClientCounts()

    /// Counts one of `client`'s requests in progress until the slot is released (or dropped);
    /// refuses it past `limit`.
    func enter(client: String?, limit: Int) throws -> Slot {
        guard let key = inProgress.enter(client, limit: limit) else {
            throw SignetError(.connectionLimit, "this client has \(limit) requests in progress already")
        }
        return Slot(counts: inProgress, key: key)
    }

    /// One request's place among its client's: given back once, when released or when nothing holds
    /// it any more (an answer dropped unwritten, a handler that threw).
    final class Slot: Sendable {
        private let counts: ClientCounts
        private let key: String
        private let released = Atomic(false)

        fileprivate init(counts: ClientCounts, key: String) {
            self.counts = counts
            self.key = key
        }

        func release() {
            guard !released.exchange(true, ordering: .relaxed) else { return }
            counts.leave(key)
        }

        /// `body`, holding this slot until its last byte is written.
        func held(by body: ResponseBody) -> ResponseBody {
            ResponseBody(contentLength: body.contentLength) { writer in
                defer { self.release() }
                try await body.write(writer)
            }
        }

        deinit { release() }
    }
}
