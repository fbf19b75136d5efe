// SPDX-License-Identifier: Apache-2.0
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
    private let open = ClientCounts()

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
        return open.enter(peer, limit: perClient).map(Admission.counted) ?? .refused
    }

    /// Releases a connection ``admit(peer:)`` counted under `key`.
    func release(_ key: String) {
        open.leave(key)
    }
}
