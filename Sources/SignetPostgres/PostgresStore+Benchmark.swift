// SPDX-License-Identifier: Apache-2.0
import Foundation
import PostgresNIO

extension PostgresStore {
    /// Adds `count` live nonce claims (`fill-<n>` under key `fill`, numbered from `first`) in one
    /// statement, for `signet-bench nonces` to measure claims against a store of a given size.
    package func fillNoncesForBenchmark(count: Int, first: Int, until expiry: Date) async throws {
        let last = first + count - 1
        let expires = Self.millis(expiry)
        try await perform { client, logger in
            _ = try await client.query(
                """
                INSERT INTO nonces (key_id, nonce, expires_at)
                SELECT 'fill', 'fill-' || g, \(expires) FROM generate_series(\(first), \(last)) AS g
                ON CONFLICT DO NOTHING
                """,
                logger: logger
            )
        }
    }
}
