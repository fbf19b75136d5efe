// SPDX-License-Identifier: Apache-2.0
import Logging
import SignetCore
import SignetPostgres
import SignetSQLite
import SignetStore

extension GatewayConfiguration.Store {
    /// Opens the configured store (creating the SQLite file or schema on first start).
    public func open(logger: Logger) async throws -> any SignetStorage {
        if let path = sqlite { return try await SQLiteStore.open(path: path, logger: logger) }
        if let url = postgres { return try await PostgresStore.connect(url: url, logger: logger) }
        if memory == true { return MemoryStore() }
        throw SignetError(.malformedMessage, "no store configured")
    }
}
