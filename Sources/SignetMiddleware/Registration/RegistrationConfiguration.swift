// SPDX-License-Identifier: Apache-2.0

/// What the registration endpoints allow, and how hard they are bounded.
///
/// The gateway derives it from its configuration file; an app that embeds
/// ``SignetRegistrationRoutes`` builds one itself.
public struct RegistrationConfiguration: Sendable {
    /// Whether `POST /signet/v1/devices` takes device keys without an App Attest attestation.
    public var allowUnattestedDevices: Bool
    /// Whether `POST /signet/v1/devices/debug` registers debug devices (an operator's, by public key).
    public var allowDebugDevices: Bool
    /// How long an issued challenge can be used. Challenges are stateless: there is no cap on how
    /// many are outstanding, only ``challengesPerSourcePerMinute``.
    public var challengeTTLSeconds: Int
    /// Challenges one source may ask for in a minute.
    public var challengesPerSourcePerMinute: Int
    /// The bearer token of `DELETE /signet/v1/devices/{id}`; `nil` turns revocation off (`not_found`).
    public var adminToken: String?
    /// Whether a registration must carry a user's password login (Digest or Basic); the device is
    /// then bound to the user.
    public var requirePasswordLogin: Bool

    public init(
        allowUnattestedDevices: Bool = true,
        allowDebugDevices: Bool = false,
        challengeTTLSeconds: Int = 120,
        challengesPerSourcePerMinute: Int = 60,
        adminToken: String? = nil,
        requirePasswordLogin: Bool = false
    ) {
        self.requirePasswordLogin = requirePasswordLogin
        self.allowUnattestedDevices = allowUnattestedDevices
        self.allowDebugDevices = allowDebugDevices
        self.challengeTTLSeconds = challengeTTLSeconds
        self.challengesPerSourcePerMinute = challengesPerSourcePerMinute
        self.adminToken = adminToken
    }
}
