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
    /// A verified client whose key has at least this trust level, or a known agent (Web Bot Auth):
    /// a route that takes agents beside its registered clients. An agent satisfies no trust level
    /// of its own accord; the route says it takes them.
    case trustLevelOrAgent(TrustLevel)
    /// A client certificate from the device CA over mutual TLS, of an active device.
    case clientCertificate
    /// The seed high-score scheme: `msg` + hex `hmac` query parameters under a shared key.
    case legacyQueryHMAC(keyID: String)
    /// A legacy encrypted body (JSON `{mac, iv, payload}` or RNCryptor v3) under the configured keys.
    case legacyEnvelope
    /// A user's password (HTTP Digest, or Basic over TLS), with what the route accepts.
    case password(PasswordRouteOptions)
    /// A user's password, or a signed request of a device registered after a password login (a
    /// device key or better, bound to a user).
    case passwordOrDevice(PasswordRouteOptions)
    /// A bearer token in place of a signature: a Signet app token, a Firebase App Check token, or
    /// either.
    case tokens(TokenAcceptance)
    /// A signed request of any registered key together with a Play Integrity token whose nonce (or
    /// request hash) is the SHA-256 of the request's signature base: a fresh verdict per request.
    case playIntegrity

    /// Throws `trust_level_insufficient` when a key of this owner does not meet the requirement (a
    /// key without an owner counts as a shared secret). The verifier calls it as soon as the key is
    /// known, before any cryptography and before a nonce is claimed or a counter advanced.
    public func authorize(_ owner: KeyOwner?) throws {
        let level = owner?.trustLevel ?? .sharedSecret
        switch self {
        case .trustLevel(let minimum) where !level.satisfies(minimum):
            throw SignetError(.trustLevelInsufficient, "this route needs \(minimum.rawValue), the client is \(level.rawValue)")
        case .trustLevelOrAgent(let minimum) where level != .agent && !level.satisfies(minimum):
            throw SignetError(.trustLevelInsufficient, "this route needs \(minimum.rawValue) or a known agent, the client is \(level.rawValue)")
        case .passwordOrDevice where level < .deviceKey || owner?.user == nil:
            // The route is a user's: a device stands in for the password only if it was
            // registered after one.
            throw SignetError(.trustLevelInsufficient, "this route needs a password or a device registered after a password login")
        default:
            break
        }
    }
}
