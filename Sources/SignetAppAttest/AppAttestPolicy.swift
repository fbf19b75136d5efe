// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SwiftASN1
import X509

/// What an App Attest verifier accepts.
public struct AppAttestPolicy: Sendable {
    /// How the device turned the server's challenge into `clientDataHash`.
    public enum ClientDataHash: Sendable, Hashable {
        /// `SHA256(challenge)`, the usual convention (and Signet's).
        case sha256OfChallenge
        /// The raw challenge bytes, as Apple's own documentation sample passes them.
        case rawChallenge
    }

    public enum Environment: String, Sendable, Hashable {
        case production, development
    }

    /// Accepted App IDs, `TEAMID.bundle.id`.
    public var appIDs: Set<String>
    /// Whether keys from the development environment (`appattestdevelop`) are accepted.
    public var allowDevelopment: Bool
    public var clientDataHash: ClientDataHash
    /// Trusted roots: Apple's App Attestation root unless a test or simulator setup says otherwise.
    public var roots: [Certificate]
    /// Roots for receipts: Apple Root CA - G3 by default; the attestation roots when those are given
    /// and these are not (a simulator's one root signs both).
    public var receiptRoots: [Certificate]
    /// Which app builds may register (iOS 27's validation category and bundle version): checked as
    /// the last step, after everything Apple signed verified. Any when `nil`.
    public var appBuild: AppBuildPolicy?

    public init(
        appIDs: Set<String>,
        allowDevelopment: Bool = false,
        clientDataHash: ClientDataHash = .sha256OfChallenge,
        roots: [Certificate]? = nil,
        receiptRoots: [Certificate]? = nil,
        appBuild: AppBuildPolicy? = nil
    ) throws {
        self.appBuild = appBuild
        self.appIDs = appIDs
        self.allowDevelopment = allowDevelopment
        self.clientDataHash = clientDataHash
        self.roots = try roots ?? [Certificate(pemEncoded: AppleAppAttestationRoot.pem)]
        self.receiptRoots = try receiptRoots ?? roots ?? [Certificate(pemEncoded: AppleRootCAG3.pem)]
    }
}
