// SPDX-License-Identifier: Apache-2.0

/// How a client takes signed trust documents (`SignetClient/updateTrust(origin:)`): the trust keys
/// compiled into the app, the document it shipped with, and where accepted updates are kept.
public struct TrustUpdates: Sendable {
    /// PEM public keys (P-256 or Ed25519) by key id; several, so the trust key itself can rotate.
    public var trustKeys: [String: String]
    /// The compact JWS the app shipped with; its pin sets apply until a newer one is accepted.
    public var compiledDocument: String?
    /// A folder for the accepted document (`trust.jws`); `nil` keeps it in memory only.
    public var stateDirectory: String?
    /// Where the gateway serves the document.
    public var path: String

    public init(
        trustKeys: [String: String],
        compiledDocument: String? = nil,
        stateDirectory: String? = nil,
        path: String = "/signet/v1/trust"
    ) {
        self.trustKeys = trustKeys
        self.compiledDocument = compiledDocument
        self.stateDirectory = stateDirectory
        self.path = path
    }
}
