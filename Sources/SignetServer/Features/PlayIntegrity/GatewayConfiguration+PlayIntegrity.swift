// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetAndroid
import SignetCore

extension GatewayConfiguration.AndroidAttestation {
    /// Play Integrity at registration: a classic token, requested by the app with the
    /// registration's challenge as nonce, verified locally with the Play Console's keys.
    public struct PlayIntegrity: Codable, Sendable, Equatable {
        /// Classic tokens: file with the Play Console's decryption key (base64), readable by the
        /// gateway only.
        public var decryptionKeyFile: String?
        /// Classic tokens: file with the verification key: PEM, or the base64 the Play Console shows.
        public var verificationKeyFile: String?
        /// Standard tokens, decoded by Google; off when absent.
        public var standard: Standard?
        /// Every Android registration carries a token: on when absent; off checks one when present.
        public var required: Bool?
        /// `basic`, `device` (the default) or `strong`.
        public var minimumDeviceIntegrity: DeviceIntegrity?
        /// Refuse an app Google Play does not recognise: on when absent.
        public var requireRecognizedApp: Bool?
        /// Refuse an account without a licence: off when absent.
        public var requireLicensed: Bool?
        /// How old a token may be; 300 when absent.
        public var maximumAgeSeconds: Int?
        /// The opt-in environment signals (Play Protect, app access risk, recent device activity,
        /// device attributes, device recall); none checked when absent.
        public var environment: Environment?

        /// What the opt-in signals must say; a signal asked about must be in the verdict.
        public struct Environment: Codable, Sendable, Equatable {
            /// `NO_ISSUES`, `NO_DATA`, `POSSIBLE_RISK`, `MEDIUM_RISK` or `HIGH_RISK`: the highest risk taken.
            public var maximumPlayProtectRisk: String?
            /// `appsDetected` values refused: `KNOWN_CAPTURING`, `KNOWN_CONTROLLING`, `UNKNOWN_CAPTURING`…
            public var refuseAppsDetected: [String]?
            /// 1 to 4: the busiest recent device activity (`LEVEL_n`) taken.
            public var maximumDeviceActivityLevel: Int?
            /// The oldest Android SDK version taken.
            public var minimumSdkVersion: Int?
            /// Device recall bits (1 to 3) that refuse a device when set.
            public var refuseRecallBits: [Int]?
            /// `refuse` (when absent) or `flag`: a signal outside the policy lets the registration
            /// or request through, its code kept in the device record and sent upstream as
            /// `Signet-Integrity-Flags`.
            public var action: GatewayConfiguration.RiskAction?

            public init() {}
        }

        public init(decryptionKeyFile: String? = nil, verificationKeyFile: String? = nil, standard: Standard? = nil) {
            self.decryptionKeyFile = decryptionKeyFile
            self.verificationKeyFile = verificationKeyFile
            self.standard = standard
        }

        /// Google's `decodeIntegrityToken`, called with the app's Google Cloud service account.
        public struct Standard: Codable, Sendable, Equatable {
            /// The service account's JSON key file, readable by the gateway only.
            public var serviceAccountFile: String
            /// The package whose tokens are decoded (the API's path names it).
            public var packageName: String
            /// Google's endpoint by default; `{package}` stands for the package name.
            public var decodeUrl: String?
            /// The key file's `token_uri`, or Google's, by default.
            public var tokenUrl: String?
            /// Standard tokens this gateway has Google decode per minute on `play-integrity`
            /// routes, all clients together: Google's default quota is 10,000 a day, and
            /// unattested keys cost a client nothing to make. 6 (8,640 a day) when absent.
            public var decodesPerMinute: Int?
            var decodeBudget: Int { decodesPerMinute ?? 6 }

            public init(serviceAccountFile: String, packageName: String, decodeUrl: String? = nil, tokenUrl: String? = nil) {
                self.serviceAccountFile = serviceAccountFile
                self.packageName = packageName
                self.decodeUrl = decodeUrl
                self.tokenUrl = tokenUrl
            }
        }

        public enum DeviceIntegrity: String, Sendable, ConfigurationChoice {
            case basic, device, strong
        }
    }
}

extension GatewayConfiguration.AndroidAttestation.PlayIntegrity {
    func validate() throws {
        guard (decryptionKeyFile == nil) == (verificationKeyFile == nil) else {
            throw ConfigurationError.invalid("androidAttestation.playIntegrity", "androidAttestation.playIntegrity: classic tokens need decryptionKeyFile and verificationKeyFile")
        }
        guard decryptionKeyFile != nil || standard != nil else {
            throw ConfigurationError.invalid("androidAttestation.playIntegrity", "androidAttestation.playIntegrity takes classic tokens (decryptionKeyFile, verificationKeyFile), standard ones (standard), or both")
        }
        for (name, url) in [("decodeUrl", standard?.decodeUrl), ("tokenUrl", standard?.tokenUrl)] {
            // The service account's access token travels there: plain HTTP only to this machine.
            guard let url, !GatewayConfiguration.AndroidAttestation.isSecureOrLocal(url) else { continue }
            throw ConfigurationError.invalid("androidAttestation.playIntegrity.standard.\(name)", "androidAttestation.playIntegrity.standard.\(name) is https (plain http only to this machine)")
        }
        if let budget = standard?.decodesPerMinute, budget < 1 {
            throw ConfigurationError.invalid("androidAttestation.playIntegrity.standard.decodesPerMinute", "androidAttestation.playIntegrity.standard.decodesPerMinute is at least 1")
        }
        if let package = standard?.packageName,
            package.isEmpty || !package.utf8.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte | 0x20) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            })
        {
            throw ConfigurationError.invalid("androidAttestation.playIntegrity.standard.packageName", "androidAttestation.playIntegrity.standard.packageName is an Android package name (letters, digits, . and _)")
        }
        if let environment {
            let at = "androidAttestation.playIntegrity.environment"
            if let risk = environment.maximumPlayProtectRisk, !PlayIntegrityPolicy.Environment.playProtectOrder.contains(risk) {
                throw ConfigurationError.invalid("\(at).maximumPlayProtectRisk", "\(at).maximumPlayProtectRisk is one of \(PlayIntegrityPolicy.Environment.playProtectOrder.joined(separator: ", "))")
            }
            if let unknown = environment.refuseAppsDetected?.first(where: { !PlayIntegrityPolicy.Environment.appsDetectedValues.contains($0) }) {
                throw ConfigurationError.invalid("\(at).refuseAppsDetected", "\(at).refuseAppsDetected: \(unknown.debugDescription) is not an appsDetected value")
            }
            if let level = environment.maximumDeviceActivityLevel, !(1...4).contains(level) {
                throw ConfigurationError.invalid("\(at).maximumDeviceActivityLevel", "\(at).maximumDeviceActivityLevel is 1 to 4")
            }
            if let sdk = environment.minimumSdkVersion, !(1...100).contains(sdk) {
                throw ConfigurationError.invalid("\(at).minimumSdkVersion", "\(at).minimumSdkVersion is an Android SDK version (1 to 100)")
            }
            if let bits = environment.refuseRecallBits, !bits.allSatisfy((1...3).contains) {
                throw ConfigurationError.invalid("\(at).refuseRecallBits", "\(at).refuseRecallBits are 1, 2 or 3")
            }
        }
        if let age = maximumAgeSeconds, !(10...3600).contains(age) {
            throw ConfigurationError.invalid("androidAttestation.playIntegrity.maximumAgeSeconds", "androidAttestation.playIntegrity.maximumAgeSeconds is 10 to 3600")
        }
    }
}

extension GatewayConfiguration.AndroidAttestation {
    /// The verdict policy of Play Integrity, classic or standard.
    func playIntegrityPolicy() -> PlayIntegrityPolicy? {
        guard let settings = playIntegrity else { return nil }
        let level: PlayIntegrityPolicy.DeviceIntegrity =
            switch settings.minimumDeviceIntegrity ?? .device {
            case .basic: .basic
            case .device: .device
            case .strong: .strong
            }
        // The package standard tokens are decoded for is the one their verdicts must name.
        let packages = packageNames ?? settings.standard.map { [$0.packageName] } ?? []
        var policy = PlayIntegrityPolicy(
            packageNames: Set(packages),
            certificateDigests: Set((signingDigests ?? []).compactMap(Self.hexBytes)),
            requireRecognizedApp: settings.requireRecognizedApp ?? true,
            minimumDeviceIntegrity: level,
            requireLicensed: settings.requireLicensed ?? false,
            maximumAge: TimeInterval(settings.maximumAgeSeconds ?? 300)
        )
        if let environment = settings.environment {
            policy.environment.maximumPlayProtectRisk = environment.maximumPlayProtectRisk
            policy.environment.refusedAppsDetected = Set(environment.refuseAppsDetected ?? [])
            policy.environment.maximumDeviceActivityLevel = environment.maximumDeviceActivityLevel
            policy.environment.minimumSDKVersion = environment.minimumSdkVersion
            policy.environment.refusedRecallBits = Set(environment.refuseRecallBits ?? [])
            policy.environment.action = environment.action == .flag ? .flag : .refuse
        }
        return policy
    }

    /// The classic Play Integrity verifier, with the keys read from their files.
    func playIntegrityVerifier() throws -> PlayIntegrityVerifier? {
        guard let settings = playIntegrity, let decryptionKeyFile = settings.decryptionKeyFile,
            let verificationKeyFile = settings.verificationKeyFile, let policy = playIntegrityPolicy()
        else { return nil }
        func read(_ file: String, _ key: String) throws -> String {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ConfigurationError(.file, at: "androidAttestation.playIntegrity.\(key)", "cannot read \(file)")
            }
            return String(decoding: data, as: UTF8.self)
        }
        do {
            return try PlayIntegrityVerifier(
                decryptionKey: try read(decryptionKeyFile, "decryptionKeyFile"),
                verificationKey: try read(verificationKeyFile, "verificationKeyFile"),
                policy: policy
            )
        } catch let error as SignetError {
            throw ConfigurationError.invalid("androidAttestation.playIntegrity", "androidAttestation.playIntegrity: \(error.reason)")
        }
    }
}
