// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetStore

/// Who a verified request came from, as the middleware established it.
public struct SignetIdentity: Sendable, Hashable {
    /// The registered device, or `nil` for a shared-secret client.
    public var deviceID: String?
    /// The user: logged in with a password, or owning the device (registered after a login).
    public var user: String?
    public var keyID: String
    public var trustLevel: TrustLevel
    public var algorithm: String
    public var components: [String]
    public var nonce: String?
    public var created: Date?
    /// Apple's App Attest risk metric for the device, where known (forwarded as `Signet-Risk-Metric`).
    public var riskMetric: Int?
    /// The app a Firebase App Check token was issued to (forwarded as `Signet-App-Id`).
    public var appID: String?
    /// The app build an App Attest assertion declared (iOS 27; forwarded as `Signet-App-Category`
    /// and `Signet-App-Version`); `nil` for other signatures.
    public var appBuild: AppBuild?
    /// The known agent (Web Bot Auth) whose published key signed, by its configured name
    /// (forwarded as `Signet-Agent`).
    public var agent: String?
    /// The codes of the Play Integrity signals a flagging policy let through (`play_protect_risk`…):
    /// at the device's registration, and on a `play-integrity` route for this request. Forwarded
    /// as `Signet-Integrity-Flags`; empty for every other client.
    public var integrityFlags: [String] = []

    public init(
        deviceID: String?,
        keyID: String,
        trustLevel: TrustLevel,
        algorithm: String,
        components: [String] = [],
        nonce: String? = nil,
        created: Date? = nil,
        user: String? = nil,
        appID: String? = nil
    ) {
        self.deviceID = deviceID
        self.user = user
        self.keyID = keyID
        self.trustLevel = trustLevel
        self.algorithm = algorithm
        self.components = components
        self.nonce = nonce
        self.created = created
        self.appID = appID
    }

    /// The client a verified signature names: its key, the key's owner and trust level, and what
    /// the signature covered.
    public init(_ verified: VerifiedSignature) {
        self.init(
            deviceID: verified.owner?.deviceID,
            keyID: verified.keyID,
            trustLevel: verified.owner?.trustLevel ?? .sharedSecret,
            algorithm: verified.algorithm,
            components: verified.components.map(\.description),
            nonce: verified.nonce,
            created: verified.created,
            user: verified.owner?.user
        )
        riskMetric = verified.owner?.riskMetric
        appBuild = verified.evidence.appBuild
        agent = verified.owner?.agent
        integrityFlags = verified.owner?.integrityFlags ?? []
    }
}
