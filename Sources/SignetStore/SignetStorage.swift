// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Everything a Signet server keeps. Each replay guard is atomic in the store itself.
public protocol SignetStorage: DeviceStore, NonceStore, PinReportStore, AccountStore,
    LoginThrottleStore, ServerSecretStore, ReceiptStore, ConsoleStore, AttestationBatchStore
{
    /// Deletes expired nonces (challenge claims among them), pin reports, login failure windows,
    /// attestation counts past their retention, console sessions, old
    /// activity counts and refusals beyond their retention or count; returns how many
    /// rows went.
    func sweep(now: Date) async throws -> Int
    /// Throws unless the store answers a trivial query now (the readiness check).
    func ping() async throws
    /// Releases connections.
    func shutdown() async throws
    /// Whether every operation ends within a bound of the store's own — a local file whose lock
    /// waits time out (SQLite's `busy_timeout`), memory — so that a server need not race it against
    /// a deadline (a task of its own per operation costs a verified request a fifth of its rate on
    /// one core). `false` by default: a network store (PostgreSQL) waits as long as its server is away.
    var boundsItsOwnWaits: Bool { get }
}

extension SignetStorage {
    public var boundsItsOwnWaits: Bool { false }
}
