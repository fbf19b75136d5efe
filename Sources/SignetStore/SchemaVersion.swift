// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// The schema a store's database is at, against the migrations this release knows.
public enum SchemaVersion {
    /// Refuses a database migrated by a newer release: an older one would read and write tables
    /// whose meaning it does not know. Migrations only add, so the newer release keeps working on
    /// it; a downgrade goes through a backup taken before the upgrade.
    public static func check(found: Int, known: Int, store: String) throws {
        guard found > known else { return }
        throw SignetError(
            .storeUnavailable,
            "\(store): the database's schema is version \(found), newer than the \(known) this release knows: "
                + "a newer signet migrated it; run that release (or restore a backup taken before the upgrade)"
        )
    }
}
