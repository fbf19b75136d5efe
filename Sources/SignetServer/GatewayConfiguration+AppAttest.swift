// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware

extension GatewayConfiguration {
    /// App Attest registration and the `apple-app-attest` algorithm; off when absent.
    public struct AppAttest: Codable, Sendable {
        /// Accepted App IDs, `TEAMID.bundle.id`.
        public var appIDs: [String]
        public var allowDevelopment: Bool?
        public var clientDataHash: ClientDataHash?
        /// PEM file of extra trusted roots (the simulator's, in development). Apple's root is used
        /// when this is absent; when present, only these roots are trusted.
        public var trustedRootsFile: String?
        /// How many counters below the highest may still arrive, each once (an app signing
        /// requests concurrently delivers them out of order); 0, the default, is strict. At most 63.
        public var counterWindow: Int?
        public init(
            appIDs: [String],
            allowDevelopment: Bool? = nil,
            clientDataHash: ClientDataHash? = nil,
            trustedRootsFile: String? = nil,
            counterWindow: Int? = nil
        ) {
            self.counterWindow = counterWindow
            self.appIDs = appIDs
            self.allowDevelopment = allowDevelopment
            self.clientDataHash = clientDataHash
            self.trustedRootsFile = trustedRootsFile
        }
    }

    /// What the app passed to App Attest as `clientDataHash` for a challenge.
    public enum ClientDataHash: String, Sendable, ConfigurationChoice {
        /// SHA-256 of the challenge's UTF-8 bytes (the default).
        case sha256
        /// The challenge's bytes themselves.
        case raw
    }
}
