// SPDX-License-Identifier: Apache-2.0

/// How a key reached the server, from weakest to strongest. Routes ask for a minimum.
public enum TrustLevel: String, Sendable, Codable, CaseIterable, Comparable {
    /// A configured HMAC secret.
    case sharedSecret = "shared-secret"
    /// A device key registered with proof of possession, not attested.
    case deviceKey = "device-key"
    /// A key attested by Apple App Attest.
    case appAttest = "app-attest"
    /// A client certificate from Signet's device CA, over mutual TLS.
    case clientCertificate = "client-certificate"

    private var rank: Int {
        switch self {
        case .sharedSecret: 0
        case .deviceKey: 1
        case .clientCertificate: 2
        case .appAttest: 3
        }
    }

    public static func < (lhs: TrustLevel, rhs: TrustLevel) -> Bool { lhs.rank < rhs.rank }
}
