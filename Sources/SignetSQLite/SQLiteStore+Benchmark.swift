// SPDX-License-Identifier: Apache-2.0
import Foundation
import SQLiteNIO

extension SQLiteStore {
    /// Adds `count` live nonce claims (`fill-<n>` under key `fill`, numbered from `first`) in one
    /// statement, for `signet-bench nonces` to measure claims against a store of a given size.
    package func fillNoncesForBenchmark(count: Int, first: Int, until expiry: Date) async throws {
        _ = try await query(
            """
            WITH RECURSIVE seq(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?2)
            INSERT INTO nonce_log (key_id, nonce, expires_at) SELECT 'fill', 'fill-' || n, ?3 FROM seq
            """,
            [.integer(first), .integer(first + count - 1), .integer(Self.millis(expiry))]
        )
        try await nonces.readIn()
    }
}
