// SPDX-License-Identifier: Apache-2.0
import Synchronization
import SignetMiddleware

/// Open connections per client address on one listener: past `perClient`, a new connection from
/// that address is closed as soon as it is accepted (nginx's `limit_conn` per address), so one
/// host cannot hold the file descriptors every other client needs.
///
/// An address is an IPv4 address or an IPv6 /64 (``IPAddress/sourceKey``). Connections from trusted
/// proxies are not counted here — they carry many clients; behind them the gateway counts each
/// client's requests in progress instead (``ClientRequestLimiter``).
final class ConnectionLimits: Sendable {
    let perClient: Int
    private let trusted: TrustedProxies?
    private let open = Mutex<[String: Int]>([:])

    init(perClient: Int, trusted: TrustedProxies?) {
        self.perClient = perClient
        self.trusted = trusted
    }

    enum Admission: Equatable {
        /// Not counted: a trusted proxy's connection, or a peer with no address.
        case uncounted
        /// Counted under this key until it closes.
        case counted(String)
        /// Past the limit: close it.
        case refused
    }

    /// Counts a connection from `peer`, or refuses it past the limit (nothing counted then).
    func admit(peer: String?) -> Admission {
        guard let peer, !(trusted?.isTrusted(peer) ?? false) else { return .uncounted }
        let key = IPAddress.sourceKey(peer)
        return open.withLock { open in
            let count = open[key, default: 0]
            guard count < perClient else { return .refused }
            open[key] = count + 1
            return .counted(key)
        }
    }

    /// Releases a connection ``admit(peer:)`` counted under `key`.
    func release(_ key: String) {
        open.withLock { open in
            let count = open[key, default: 1] - 1
            open[key] = count > 0 ? count : nil
        }
    }

    /// Connections counted now (for tests and the console).
    func count(peer: String) -> Int {
        open.withLock { $0[IPAddress.sourceKey(peer), default: 0] }
    }
}
