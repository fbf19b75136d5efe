// SPDX-License-Identifier: Apache-2.0

extension GatewayConfiguration {
    /// The CA that issues device client certificates from registration CSRs.
    public struct DeviceCA: Codable, Sendable, Equatable {
        /// PEM files; created (a new P-256 CA) when both are absent.
        public var certificateFile: String
        public var keyFile: String
        public var validityDays: Int?
        /// `validityDays` in force: 30 when absent.
        var validity: Int { validityDays ?? 30 }
        public init(certificateFile: String, keyFile: String, validityDays: Int? = nil) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.validityDays = validityDays
        }
    }
}
