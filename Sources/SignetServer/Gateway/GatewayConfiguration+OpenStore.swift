// SPDX-License-Identifier: Apache-2.0
import Logging
import SignetCore
import SignetPostgres
import SignetSQLite
import SignetStore

extension GatewayConfiguration.Store {
    /// Opens the configured store (creating the SQLite file or schema on first start).
    public func open(logger: Logger) async throws -> any SignetStorage {
        switch self {
        case .sqlite(let path): try await SQLiteStore.open(path: path, logger: logger)
        case .postgres(let url): try await PostgresStore.connect(url: url, logger: logger)
        case .memory: MemoryStore()
        }
    }
}
