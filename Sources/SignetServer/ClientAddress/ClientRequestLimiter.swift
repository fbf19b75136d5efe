// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware
import Synchronization

/// Requests in progress per client behind trusted proxies, where a connection carries many clients
/// and the connection limit per address (``ConnectionLimits``) cannot tell them apart: past
/// `perClient` a client's next request is refused `429 connection_limit` until one of its own ends
/// (nginx's `limit_conn` keyed by the real client address).
///
/// A client is an IPv4 address or an IPv6 /64 (``IPAddress/sourceKey``). Shared by every
/// configuration a reload makes, so a reload never forgets what is in progress.
final class ClientRequestLimiter: Sendable {
    private let inProgress = Mutex<[String: Int]>([:])

    /// Runs `body` counted as one of `client`'s requests in progress; refuses it past `limit`.
    func run<T>(client: String?, limit: Int, _ body: () async throws -> T) async throws -> T {
        let key = IPAddress.sourceKey(client)
        let admitted = inProgress.withLock { inProgress -> Bool in
            let count = inProgress[key, default: 0]
            guard count < limit else { return false }
            inProgress[key] = count + 1
            return true
        }
        guard admitted else {
            throw SignetError(.connectionLimit, "this client has \(limit) requests in progress already")
        }
        defer {
            inProgress.withLock { inProgress in
                let count = inProgress[key, default: 1] - 1
                inProgress[key] = count > 0 ? count : nil
            }
        }
        return try await body()
    }
}
