// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The PostgreSQL server `scripts/test.sh` starts; CI must have one. Tests needing it are skipped
/// (never silently in CI) when it is absent.
public enum TestPostgres {
    public static let url: String? = {
        if let url = ProcessInfo.processInfo.environment["SIGNET_POSTGRES_URL"], !url.isEmpty { return url }
        precondition(ProcessInfo.processInfo.environment["CI"] == nil, "CI must provide SIGNET_POSTGRES_URL")
        return nil
    }()
}
