// SPDX-License-Identifier: Apache-2.0

/// How a client proved who it is — for keys, how the key reached the server — from weakest to
/// strongest. Signature routes ask for a minimum.
public enum TrustLevel: String, Sendable, Codable, CaseIterable, Comparable {
    /// A key the request delivered itself, in `Signature-Key` (`hwk`), that nobody vouches for: the
    /// same key signs again, nothing more is known. Below every other level; only `verified` routes
    /// that take such keys admit it.
    case pseudonymous
    /// A known automated agent (Web Bot Auth): its key from the directory the agent publishes and
    /// the gateway is configured to trust. Beside the other levels rather than above them: only
    /// routes that take agents admit it.
    case agent
    /// A user's password (HTTP Basic or Digest): no key at all, so below every key.
    case password
    /// A configured HMAC secret.
    case sharedSecret = "shared-secret"
    /// A device key registered with proof of possession, not attested.
    case deviceKey = "device-key"
    /// A key attested by Apple App Attest.
    case appAttest = "app-attest"
    /// A hardware Keystore key attested by Android Key Attestation (a chain to Google's roots).
    case androidKeyAttestation = "android-key-attestation"
    /// Attested by either platform. What a route asks for when it takes an attested device without
    /// caring which; a key's own level is always the platform's.
    case attested
    /// A client certificate from Signet's device CA, over mutual TLS.
    case clientCertificate = "client-certificate"
    /// A debug device an operator registered by its public key (the simulator, CI): where a gateway
    /// allows them (`allowDebugDevices`), it stands in for an attested device of either platform
    /// (`attested`, `device-key`, `verified` routes take it) and never for a named platform
    /// (`app-attest`, `android-key-attestation` routes refuse it). The upstream sees `debug`.
    case debug

    private var rank: Int {
        switch self {
        case .pseudonymous, .agent: -2
        case .password: -1
        case .sharedSecret: 0
        case .deviceKey: 1
        case .clientCertificate: 2
        case .appAttest, .androidKeyAttestation, .attested, .debug: 3
        }
    }

    /// Whether a key of this level meets what a route asks: a platform's attestation is met by that
    /// platform's alone, ``attested`` by either (or a ``debug`` device), any other level by itself
    /// or anything stronger.
    public func satisfies(_ required: TrustLevel) -> Bool {
        switch required {
        case .appAttest, .androidKeyAttestation, .agent: self == required
        default: self >= required
        }
    }

    public static func < (lhs: TrustLevel, rhs: TrustLevel) -> Bool { lhs.rank < rhs.rank }
}
