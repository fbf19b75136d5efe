// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What a verifier knows about one key: the key, the algorithm it must be used with, and when.
///
/// The algorithm comes from here, never from the message: a message `alg` that disagrees is
/// rejected with `alg_mismatch`.
public struct KeyRecord: Sendable {
    public var keyID: String
    /// The registered algorithm name, e.g. `ed25519`.
    public var algorithm: String
    public var key: VerificationKey
    public var notBefore: Date?
    public var notAfter: Date?
    public var revoked: Bool
    /// Who the key belongs to; `nil` for keys of no particular owner (tools, tests).
    public var owner: KeyOwner?

    public init(
        keyID: String,
        algorithm: String,
        key: VerificationKey,
        notBefore: Date? = nil,
        notAfter: Date? = nil,
        revoked: Bool = false,
        owner: KeyOwner? = nil
    ) {
        self.keyID = keyID
        self.algorithm = algorithm
        self.key = key
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.revoked = revoked
        self.owner = owner
    }

    /// Whether the record may verify a signature at `time`.
    public func isUsable(at time: Date) -> Bool {
        !revoked && (notBefore.map { $0 <= time } ?? true) && (notAfter.map { time <= $0 } ?? true)
    }
}

/// Where a verifier looks keys up. A server resolves from its store; ``KeyRing`` is in memory.
public protocol KeyResolver: Sendable {
    /// Every record ever registered under `keyID` (current, future, expired and revoked), so the
    /// verifier can say precisely why none applies. Empty when the key id is unknown.
    nonisolated(nonsending) func records(for keyID: String) async throws -> [KeyRecord]
}
