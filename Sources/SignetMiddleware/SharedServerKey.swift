// SPDX-License-Identifier: Apache-2.0
import Crypto
import SignetStore
import Synchronization

/// A 256-bit key every instance shares through the store (`ServerSecretStore`), created by the
/// first instance that asks and then kept in memory: the key of stateless Digest nonces and
/// registration challenges.
final class SharedServerKey: Sendable {
    let name: String
    private let store: any ServerSecretStore
    private let cached = Mutex<SymmetricKey?>(nil)

    init(name: String, store: any ServerSecretStore) {
        self.name = name
        self.store = store
    }

    func key() async throws -> SymmetricKey {
        if let key = cached.withLock({ $0 }) { return key }
        let proposed = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let key = SymmetricKey(data: try await store.serverSecret(named: name, proposing: proposed))
        cached.withLock { $0 = key }
        return key
    }
}
