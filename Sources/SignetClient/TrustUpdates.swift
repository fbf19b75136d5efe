// SPDX-License-Identifier: Apache-2.0

/// How a client takes signed trust documents (`SignetClient/updateTrust(origin:)`): the trust keys
/// compiled into the app, the document it shipped with, and where accepted updates are kept.
public struct TrustUpdates: Sendable {
    /// PEM public keys (P-256 or Ed25519) by key id; several, so the trust key itself can rotate.
    public var trustKeys: [String: String]
    /// The compact JWS the app shipped with; its pin sets apply until a newer one is accepted.
    public var compiledDocument: String?
    /// Where the accepted document is kept (``FileTrustDocumentStore`` on Linux,
    /// `KeychainTrustDocumentStore` on Apple platforms); `nil` keeps it in memory only.
    public var store: (any TrustDocumentStore)?
    /// Where the gateway serves the document.
    public var path: String

    /// The folder of a ``FileTrustDocumentStore``; `nil` for any other store.
    public var stateDirectory: String? { (store as? FileTrustDocumentStore)?.directory }

    public init(
        trustKeys: [String: String],
        compiledDocument: String? = nil,
        store: (any TrustDocumentStore)?,
        path: String = "/signet/v1/trust"
    ) {
        self.trustKeys = trustKeys
        self.compiledDocument = compiledDocument
        self.store = store
        self.path = path
    }

    /// Keeps accepted documents in `stateDirectory` (`trust.jws`), or in memory when it is `nil`.
    public init(
        trustKeys: [String: String],
        compiledDocument: String? = nil,
        stateDirectory: String? = nil,
        path: String = "/signet/v1/trust"
    ) {
        self.init(
            trustKeys: trustKeys,
            compiledDocument: compiledDocument,
            store: stateDirectory.map { FileTrustDocumentStore(directory: $0) },
            path: path
        )
    }
}
