// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware

/// Requests in progress per client behind trusted proxies, where a connection carries many clients
/// and the connection limit per address (``ConnectionLimits``) cannot tell them apart: past
/// `perClient` a client's next request is refused `429 connection_limit` until one of its own ends
/// (nginx's `limit_conn` keyed by the real client address).
///
/// A client is an IPv4 address or an IPv6 /64 (``IPAddress/sourceKey``). Shared by every
/// configuration a reload makes, so a reload never forgets what is in progress.
final class ClientRequestLimiter: Sendable {
    private let inProgress = ClientCounts()

    /// Runs `body` counted as one of `client`'s requests in progress; refuses it past `limit`.
    func run<T>(client: String?, limit: Int, _ body: () async throws -> T) async throws -> T {
        guard let key = inProgress.enter(client, limit: limit) else {
            throw SignetError(.connectionLimit, "this client has \(limit) requests in progress already")
        }
        defer { inProgress.leave(key) }
        return try await body()
    }
}
