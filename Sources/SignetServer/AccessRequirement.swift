// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetStore

/// What a route demands of a client.
public enum AccessRequirement: Sendable, Hashable {
    /// No signature needed (challenges, registration, health).
    case open
    /// Any verified client.
    case verified
    /// A verified client whose key has at least this trust level.
    case trustLevel(TrustLevel)
    /// A client certificate from the device CA over mutual TLS, of an active device.
    case clientCertificate
    /// The seed high-score scheme: `msg` + hex `hmac` query parameters under a shared key.
    case legacyQueryHMAC(keyID: String)

    /// Throws `trust_level_insufficient` when `identity` does not meet the requirement.
    func check(_ identity: SignetIdentity) throws {
        if case .trustLevel(let minimum) = self, identity.trustLevel < minimum {
            throw SignetError(
                .trustLevelInsufficient,
                "this route needs \(minimum.rawValue), the client is \(identity.trustLevel.rawValue)"
            )
        }
    }
}
