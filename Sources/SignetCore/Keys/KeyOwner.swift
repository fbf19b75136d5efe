// SPDX-License-Identifier: Apache-2.0

/// Who a key belongs to: the registered device (none for a configured shared secret) and how the
/// key reached the server. A key resolver fills it in; the verifier hands it to the authorisation
/// check and to the counter store, and returns it with what verified.
public struct KeyOwner: Sendable, Hashable {
    /// The registered device, or `nil` for a shared-secret client.
    public var deviceID: String?
    public var trustLevel: TrustLevel
    /// The user the device was registered for after a password login, if any.
    public var user: String?
    /// Apple's App Attest risk metric for the device, once an exchanged receipt gave one.
    public var riskMetric: Int?
    /// The known agent a Web Bot Auth key belongs to, by its configured name.
    public var agent: String?
    /// The Play Integrity signals a flagging policy let through when the device registered (their
    /// codes), carried with everything it signs.
    public var integrityFlags: [String]

    public init(
        deviceID: String? = nil,
        trustLevel: TrustLevel,
        user: String? = nil,
        riskMetric: Int? = nil,
        agent: String? = nil,
        integrityFlags: [String] = []
    ) {
        self.deviceID = deviceID
        self.trustLevel = trustLevel
        self.user = user
        self.riskMetric = riskMetric
        self.agent = agent
        self.integrityFlags = integrityFlags
    }
}
