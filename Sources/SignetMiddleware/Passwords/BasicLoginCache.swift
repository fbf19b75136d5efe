// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import Synchronization

/// Remembers, for a while, that a user's Basic password verified, so that a client sending Basic
/// on every request costs one PBKDF2 per ``lifetime`` instead of one per request (Apache's
/// `mod_authn_socache` does the same).
///
/// Holds no password: an HMAC of it under a key made at start and never stored, beside the stored
/// hash it verified against, so a changed password (another hash) misses. Bounded in size.
public final class BasicLoginCache: Sendable {
    private struct Entry {
        var storedHash: String
        var tag: [UInt8]
        var expires: Date
    }

    private let entries = Mutex([String: Entry]())
    private let key = SymmetricKey(size: .bits256)
    public let lifetime: TimeInterval
    public let capacity: Int

    public init(lifetime: TimeInterval, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// Whether `password` verified for `user` against `storedHash` within the lifetime.
    func contains(user: String, password: String, storedHash: String, now: Date) -> Bool {
        guard lifetime > 0 else { return false }
        let tag = tag(user: user, password: password)
        return entries.withLock { entries in
            guard let entry = entries[user], entry.expires > now, entry.storedHash == storedHash else { return false }
            return ConstantTime.equals(entry.tag, tag)
        }
    }

    func insert(user: String, password: String, storedHash: String, now: Date) {
        guard lifetime > 0 else { return }
        let entry = Entry(storedHash: storedHash, tag: tag(user: user, password: password), expires: now.addingTimeInterval(lifetime))
        entries.withLock { entries in
            if entries.count >= capacity, entries[user] == nil {
                entries = entries.filter { $0.value.expires > now }
                if entries.count >= capacity { return }
            }
            entries[user] = entry
        }
    }

    /// Forgets `user` (password changed or account deleted on this instance).
    public func remove(user: String) {
        _ = entries.withLock { $0.removeValue(forKey: user) }
    }

    private func tag(user: String, password: String) -> [UInt8] {
        var message = Array(user.utf8)
        message.append(0)
        message += Array(password.utf8)
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }
}
