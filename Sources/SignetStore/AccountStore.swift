// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Users who log in with a password, and the devices bound to them.
public protocol AccountStore: Sendable {
    /// Creates the account, or replaces its password values (keeping ``AccountRecord/createdAt``).
    ///
    /// - Returns: `true` when it was created.
    func putAccount(_ account: AccountRecord) async throws -> Bool

    func account(name: String) async throws -> AccountRecord?

    /// A page of accounts by name, ascending in UTF-8 byte order, starting after `name` (from the
    /// first when `nil`): for the console, paged on the primary key.
    func listAccounts(after name: String?, limit: Int) async throws -> [AccountRecord]

    /// The account whose `userhash` for `algorithm` is `userhash` (lowercase hex).
    func account(userhash: String, algorithm: DigestAlgorithm) async throws -> AccountRecord?

    /// Deletes the account and revokes every device registered for it, as one step: no crash or
    /// concurrent registration leaves an active device of a deleted user.
    ///
    /// - Returns: `false` when there is no such account.
    func deleteAccount(name: String, at time: Date) async throws -> Bool
}
