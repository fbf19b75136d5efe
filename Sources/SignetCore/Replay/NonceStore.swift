// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Remembers `(keyid, nonce)` pairs so each is accepted at most once while it could still verify.
///
/// Implementations must make ``claim(keyID:nonce:until:now:)`` atomic: of any number of concurrent
/// calls with the same pair, exactly one returns `true` (persistent stores do this in one statement).
public protocol NonceStore: Sendable {
    /// Claims the pair until `expiry`. Returns `true` the first time, `false` for a replay.
    ///
    /// - Parameters:
    ///   - keyID: The key the signature verified under.
    ///   - nonce: The signature's `nonce` parameter.
    ///   - expiry: When the signature could no longer verify; the claim may be forgotten after it.
    ///   - now: The verifier's time, so expired claims can be swept without a clock of the store's own.
    nonisolated(nonsending) func claim(keyID: String, nonce: String, until expiry: Date, now: Date) async throws -> Bool
}

/// How long past its expiry a claim is kept before a store may forget it.
///
/// A claim's `now` is the verifier's, read before the key lookup, the signature check and the wait
/// in a store's queue: claims reach a store a little out of time order. A store that forgot a claim
/// as soon as some later claim's `now` passed its expiry would let a replay through whose own `now`
/// is still inside the window. Kept this much longer, a claim outlives every `now` a request can
/// still carry: its store wait is bounded by `storeTimeoutMilliseconds` (at most 60 s), and what
/// comes before the store (a key directory fetched, the verify) by seconds.
public enum NonceRetention {
    public static let afterExpiry: TimeInterval = 120
}
