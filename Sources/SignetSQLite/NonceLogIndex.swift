// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// The live nonce claims of the file's `nonce_log`, in memory: a digest of each pair and when its
/// claim lapses, and how far into the log this process has read.
///
/// Why: a table keyed by random nonces dirties a random B-tree page per claim, and with clients'
/// random nonces SQLite's page writes were the largest cost of a verified request
/// (docs/decisions.md, "Nonce claims: a log that appends, an index in memory"). The log is appended
/// to in arrival order instead, and whether a pair is claimed is answered here. Rows other
/// processes appended are read in under the write lock before a batch decides (``SQLiteClaimConnection``),
/// so every process on the file decides on every claim committed before its own.
struct NonceLogIndex {
    /// 128 bits of SipHash over the pair's bytes, under this process's random seed (Swift's
    /// `Hasher`). The log keeps the pairs; the digest only has to tell them apart in this process.
    /// Two live pairs with one digest would refuse the later as a replay (odds about 2⁻¹⁰⁰ for
    /// millions of live claims, and the seed is not known outside the process); a replay, the same
    /// bytes again, always has the same digest, so no collision ever lets one through.
    struct Digest: Hashable {
        var high: UInt64
        var low: UInt64

        init(keyID: String, nonce: String) {
            high = Self.hash(1, keyID, nonce)
            low = Self.hash(2, keyID, nonce)
        }

        /// The bytes as SQLite compares them (BINARY), not Swift's canonical equivalence; the key's
        /// length first, so ("a", "bc") and ("ab", "c") differ.
        private static func hash(_ domain: UInt8, _ keyID: String, _ nonce: String) -> UInt64 {
            var hasher = Hasher()
            hasher.combine(domain)
            hasher.combine(keyID.utf8.count)
            combine(keyID, into: &hasher)
            combine(nonce, into: &hasher)
            return UInt64(bitPattern: Int64(hasher.finalize()))
        }

        private static func combine(_ text: String, into hasher: inout Hasher) {
            let done: Void? = text.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            if done == nil { Array(text.utf8).withUnsafeBytes { hasher.combine(bytes: $0) } }
        }
    }

    /// Each held pair's digest and its expiry, in milliseconds since 1970 as the log stores them.
    private(set) var claims = ExpiringClaims<Digest, Int>()
    /// The last `seq` of the log this index holds; rows after it are other processes' (or none).
    private(set) var lastSeen: Int64 = 0

    /// What ``NonceRetention/afterExpiry`` is in the log's milliseconds.
    static let keptAfterExpiry = Int(NonceRetention.afterExpiry * 1000)

    /// A row of the log, read in (its own or another process's); `now` forgets what lapsed more
    /// than ``NonceRetention/afterExpiry`` before it.
    mutating func record(seq: Int64, _ digest: Digest, until expiry: Int, now: Int) {
        let cutoff = now < Int.min + Self.keptAfterExpiry ? Int.min : now - Self.keptAfterExpiry
        claims.insert(digest, until: expiry, forgettingBefore: cutoff)
        lastSeen = max(lastSeen, seq)
    }

    func isClaimed(_ digest: Digest, at now: Int) -> Bool {
        claims.isClaimed(digest, at: now)
    }

}
