// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// A registered device.
public struct DeviceRecord: Sendable, Hashable {
    public enum Status: String, Sendable, Codable {
        case active, revoked
    }

    public var deviceID: String
    /// What the device puts in its signatures' `keyid`.
    public var keyID: String
    /// The algorithm its key is used with.
    public var algorithm: String
    /// The public key as a JWK (JSON text).
    public var publicKeyJWK: String
    public var trustLevel: TrustLevel
    /// The last accepted signed counter (App Attest); 0 when none yet.
    public var counter: UInt64
    public var status: Status
    public var createdAt: Date
    public var revokedAt: Date?
    /// Facts kept from registration (environment, App ID, receipt…).
    public var attributes: [String: String]
    /// The user whose password login registered the device; deleting the user revokes it.
    public var user: String?
    /// Apple's App Attest risk metric from the device's latest exchanged receipt; nil until one.
    public var riskMetric: Int?
    /// When a request of the device was last accepted (recorded in batches, so up to a few seconds
    /// behind); nil until one was.
    public var lastSeenAt: Date?

    public init(
        deviceID: String,
        keyID: String,
        algorithm: String,
        publicKeyJWK: String,
        trustLevel: TrustLevel,
        counter: UInt64 = 0,
        status: Status = .active,
        createdAt: Date,
        revokedAt: Date? = nil,
        attributes: [String: String] = [:],
        user: String? = nil,
        riskMetric: Int? = nil,
        lastSeenAt: Date? = nil
    ) {
        self.lastSeenAt = lastSeenAt
        self.user = user
        self.riskMetric = riskMetric
        self.deviceID = deviceID
        self.keyID = keyID
        self.algorithm = algorithm
        self.publicKeyJWK = publicKeyJWK
        self.trustLevel = trustLevel
        self.counter = counter
        self.status = status
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.attributes = attributes
    }

    /// The key record a verifier uses for this device.
    public func keyRecord() throws -> KeyRecord {
        let key = try VerificationKey(jwk: try JWK(json: Array(publicKeyJWK.utf8)))
        return KeyRecord(keyID: keyID, algorithm: algorithm, key: key, revoked: status == .revoked)
    }

    package static func encodeAttributes(_ attributes: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(attributes)) ?? Data("{}".utf8), as: UTF8.self)
    }

    package static func decodeAttributes(_ text: String) -> [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
    }
}
