// SPDX-License-Identifier: Apache-2.0
import SignetMiddleware
import Synchronization

/// How many of something each client holds now — connections, requests in progress — each bounded,
/// keyed as every per-source limit is (an IPv4 address, an IPv6 /64: ``IPAddress/sourceKey``).
final class ClientCounts: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts one more for `client` and returns its key, or `nil` (nothing counted) at `limit`.
    func enter(_ client: String?, limit: Int) -> String? {
        let key = IPAddress.sourceKey(client)
        return counts.withLock { counts in
            let count = counts[key, default: 0]
            guard count < limit else { return nil }
            counts[key] = count + 1
            return key
        }
    }

    /// Counts one fewer under a key ``enter(_:limit:)`` returned.
    func leave(_ key: String) {
        counts.withLock { counts in
            let count = counts[key, default: 1] - 1
            counts[key] = count > 0 ? count : nil
        }
    }
}
