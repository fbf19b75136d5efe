// SPDX-License-Identifier: Apache-2.0

/// Where a client keeps the last trust document it accepted (a compact JWS), so the next launch
/// starts from it rather than from the compiled-in one.
///
/// What is stored is only a cache: ``SignetClient/loadTrust()`` verifies it again under the
/// compiled-in trust keys and takes it only when its `version` is above the compiled-in document's.
/// A store therefore needs to be durable and private to the app, not tamper-proof; a store that
/// loses the document costs an update fetch, never a pin. ``FileTrustDocumentStore`` serves Linux;
/// on Apple platforms `KeychainTrustDocumentStore` keeps it in the app's Keychain.
public protocol TrustDocumentStore: Sendable {
    /// The stored document; `nil` when none was stored.
    func load() throws -> String?
    /// Replaces the stored document in one step: a crash leaves the old document or the new, never half.
    func save(_ document: String) throws
}
