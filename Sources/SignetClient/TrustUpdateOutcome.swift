// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// What ``SignetClient/updateTrust(origin:)`` did.
public enum TrustUpdateOutcome: Sendable {
    /// A newer document verified and now applies to new connections.
    case updated(version: Int)
    /// The served document is the one held.
    case unchanged(version: Int)
    /// The served document was refused (or never arrived); the one held still applies.
    case refused(SignetError)
}
