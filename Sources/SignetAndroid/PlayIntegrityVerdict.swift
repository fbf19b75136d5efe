// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What a Play Integrity token says (the JWS payload Google signs): the request it answers, the
/// app as Google Play knows it, the device, and the account's licence.
public struct PlayIntegrityVerdict: Sendable, Equatable, Decodable {
    public struct RequestDetails: Sendable, Equatable, Decodable {
        public var requestPackageName: String?
        /// Classic requests: the nonce the app passed, as it passed it (base64url).
        public var nonce: String?
        /// Standard requests: the request hash the app passed.
        public var requestHash: String?
        /// When Google made the token, milliseconds since 1970 (a string in Google's JSON).
        public var timestampMillis: String?

        public init(requestPackageName: String? = nil, nonce: String? = nil, requestHash: String? = nil, timestampMillis: String? = nil) {
            self.requestPackageName = requestPackageName
            self.nonce = nonce
            self.requestHash = requestHash
            self.timestampMillis = timestampMillis
        }
    }

    public struct AppIntegrity: Sendable, Equatable, Decodable {
        /// `PLAY_RECOGNIZED`, `UNRECOGNIZED_VERSION` or `UNEVALUATED`.
        public var appRecognitionVerdict: String?
        public var packageName: String?
        /// The app signing certificates' SHA-256, base64url without padding.
        public var certificateSha256Digest: [String]?
        public var versionCode: String?
    }

    public struct DeviceIntegrity: Sendable, Equatable, Decodable {
        /// `MEETS_BASIC_INTEGRITY`, `MEETS_DEVICE_INTEGRITY`, `MEETS_STRONG_INTEGRITY`,
        /// `MEETS_VIRTUAL_INTEGRITY`; empty when the device meets none.
        public var deviceRecognitionVerdict: [String]?
        /// How many integrity tokens this device asked for lately (opt-in in the Play Console):
        /// `LEVEL_1` (fewest) to `LEVEL_4`, or `UNEVALUATED`.
        public var recentDeviceActivity: RecentDeviceActivity?
        /// The device's Android SDK version (opt-in), for a device that meets basic integrity.
        public var deviceAttributes: DeviceAttributes?
        /// The three bits the app's backend wrote for this device (device recall, opt-in).
        public var deviceRecall: DeviceRecall?
    }

    public struct RecentDeviceActivity: Sendable, Equatable, Decodable {
        public var deviceActivityLevel: String?
    }

    public struct DeviceAttributes: Sendable, Equatable, Decodable {
        public var sdkVersion: Int?
    }

    public struct DeviceRecall: Sendable, Equatable, Decodable {
        public struct Values: Sendable, Equatable, Decodable {
            public var bitFirst: Bool?
            public var bitSecond: Bool?
            public var bitThird: Bool?
        }
        public var values: Values?

        /// The bits set, numbered 1 to 3.
        public var setBits: Set<Int> { values?.setBits ?? [] }
    }

    /// What Play Integrity saw around the app (opt-in in the Play Console).
    public struct EnvironmentDetails: Sendable, Equatable, Decodable {
        public struct AppAccessRiskVerdict: Sendable, Equatable, Decodable {
            /// `KNOWN_INSTALLED`, `KNOWN_CAPTURING`, `KNOWN_CONTROLLING`, `KNOWN_OVERLAYS`,
            /// `UNKNOWN_INSTALLED`, `UNKNOWN_CAPTURING`, `UNKNOWN_CONTROLLING`, `UNKNOWN_OVERLAYS`.
            public var appsDetected: [String]?
        }
        public var appAccessRiskVerdict: AppAccessRiskVerdict?
        /// `NO_ISSUES`, `NO_DATA`, `POSSIBLE_RISK`, `MEDIUM_RISK`, `HIGH_RISK` or `UNEVALUATED`.
        public var playProtectVerdict: String?
    }

    public struct AccountDetails: Sendable, Equatable, Decodable {
        /// `LICENSED`, `UNLICENSED` or `UNEVALUATED`.
        public var appLicensingVerdict: String?
    }

    public var requestDetails: RequestDetails?
    public var appIntegrity: AppIntegrity?
    public var deviceIntegrity: DeviceIntegrity?
    public var accountDetails: AccountDetails?
    public var environmentDetails: EnvironmentDetails?

    /// When Google made the token.
    public var timestamp: Date? {
        guard let millis = requestDetails?.timestampMillis.flatMap(Int64.init) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
    }

    /// The strongest device integrity label the verdict carries.
    public var deviceIntegrityLevel: PlayIntegrityPolicy.DeviceIntegrity? {
        let labels = Set(deviceIntegrity?.deviceRecognitionVerdict ?? [])
        return PlayIntegrityPolicy.DeviceIntegrity.allCases.reversed().first { labels.contains($0.label) }
    }
}

extension PlayIntegrityVerdict.DeviceRecall.Values {
    /// The bits set, numbered 1 to 3.
    public var setBits: Set<Int> {
        Set([bitFirst, bitSecond, bitThird].enumerated().compactMap { $0.element == true ? $0.offset + 1 : nil })
    }
}
