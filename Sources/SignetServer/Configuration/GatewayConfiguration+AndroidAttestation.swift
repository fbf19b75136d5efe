// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetAndroid
import SignetCore

extension GatewayConfiguration {
    /// Android Key Attestation registration (`POST /signet/v1/devices/android`); off when absent.
    public struct AndroidAttestation: Codable, Sendable {
        /// Package names allowed to register; any when absent (set it in production).
        public var packageNames: [String]?
        /// SHA-256 digests (hex) of the app signing certificates allowed; any when absent.
        public var signingDigests: [String]?
        /// `tee` (the default) or `strongbox`.
        public var minimumSecurityLevel: SecurityLevel?
        /// Refuse an unlocked bootloader: on when absent.
        public var requireLockedBootloader: Bool?
        /// Refuse a boot chain the device maker's key did not verify: on when absent.
        public var requireVerifiedBoot: Bool?
        /// The oldest OS security patch level taken, `YYYYMM`; any when absent.
        public var minimumPatchLevel: Int?
        /// Take software-level attestations (emulators). Only with `development`.
        public var allowSoftware: Bool?
        /// PEM file of the roots chains must end in, replacing Google's (the simulator's root in
        /// development; Google's new roots before Signet ships them).
        public var rootsFile: String?
        /// Google's revocation list; none is checked when absent.
        public var statusList: StatusList?
        /// The leaked-keybox count per batch certificate; off when absent.
        public var leakedKeys: LeakedKeys?
        /// A Play Integrity verdict at registration besides the key attestation; off when absent.
        public var playIntegrity: PlayIntegrity?

        public init(packageNames: [String]? = nil, signingDigests: [String]? = nil, rootsFile: String? = nil) {
            self.packageNames = packageNames
            self.signingDigests = signingDigests
            self.rootsFile = rootsFile
        }

        public enum SecurityLevel: String, Sendable, ConfigurationChoice {
            case tee, strongbox
        }

        /// Where Google's revocation list comes from, and how old it may get.
        public struct StatusList: Codable, Sendable, Equatable {
            /// Fetched in the background: Google's attestation status URL by default.
            public var url: String?
            /// Read from this file instead of fetching (air-gapped gateways, tests).
            public var file: String?
            /// How often it is fetched again; 3600 when absent.
            public var refreshSeconds: Int?
            var refresh: Int { refreshSeconds ?? 3600 }
            /// Past this age without a successful fetch, registrations are refused
            /// (`attestation_status_unavailable`); 86400 (a day) when absent.
            public var maximumAgeSeconds: Int?
            var maximumAge: Int { maximumAgeSeconds ?? 86_400 }

            public init(url: String? = nil, file: String? = nil) {
                self.url = url
                self.file = file
            }

            /// Google's list.
            public static let googleURL = "https://android.googleapis.com/attestation/status"
        }

        /// Play Integrity at registration: a classic token, requested by the app with the
        /// registration's challenge as nonce, verified locally with the Play Console's keys.
        public struct PlayIntegrity: Codable, Sendable {
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

            public init(decryptionKeyFile: String? = nil, verificationKeyFile: String? = nil, standard: Standard? = nil) {
                self.decryptionKeyFile = decryptionKeyFile
                self.verificationKeyFile = verificationKeyFile
                self.standard = standard
            }

            /// Google's `decodeIntegrityToken`, called with the app's Google Cloud service account.
            public struct Standard: Codable, Sendable {
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

        /// Devices per batch certificate in a sliding window.
        public struct LeakedKeys: Codable, Sendable {
            /// 86400 (a day) when absent; at most 30 days.
            public var windowSeconds: Int?
            var window: Int { windowSeconds ?? 86_400 }
            /// Above this count a device is registered and flagged.
            public var flagAt: Int
            /// Above this count a device is refused (`enforce`) or flagged (`shadow`).
            public var blockAt: Int
            /// `shadow` (the default: flag only) or `enforce`.
            public var mode: Mode?

            public init(windowSeconds: Int? = nil, flagAt: Int, blockAt: Int, mode: Mode? = nil) {
                self.windowSeconds = windowSeconds
                self.flagAt = flagAt
                self.blockAt = blockAt
                self.mode = mode
            }

            public enum Mode: String, Sendable, ConfigurationChoice {
                case shadow, enforce
            }
        }
    }
}

extension GatewayConfiguration.AndroidAttestation {
    func validate(development: Bool) throws {
        if allowSoftware == true, !development {
            throw ConfigurationError.invalid("androidAttestation.allowSoftware", "androidAttestation.allowSoftware takes emulators: only with development")
        }
        for (index, digest) in (signingDigests ?? []).enumerated() where Self.hexBytes(digest)?.count != 32 {
            throw ConfigurationError.invalid("androidAttestation.signingDigests[\(index)]", "androidAttestation.signingDigests[\(index)] is a SHA-256 digest in hex (64 characters)")
        }
        if let level = minimumPatchLevel, !(200_001...299_912).contains(level) || !(1...12).contains(level % 100) {
            throw ConfigurationError.invalid("androidAttestation.minimumPatchLevel", "androidAttestation.minimumPatchLevel is YYYYMM, like 202401")
        }
        if let status = statusList {
            if status.url != nil, status.file != nil {
                throw ConfigurationError.invalid("androidAttestation.statusList", "androidAttestation.statusList takes url or file, not both")
            }
            if let url = status.url, !Self.isSecureOrLocal(url) {
                throw ConfigurationError.invalid("androidAttestation.statusList.url", "androidAttestation.statusList.url is https (plain http only to this machine)")
            }
            // Every instance fetches Google's list: not more than once a minute (development: tests).
            if status.refresh < (development ? 1 : 60) {
                throw ConfigurationError.invalid("androidAttestation.statusList.refreshSeconds", "androidAttestation.statusList.refreshSeconds is at least 60")
            }
            // Room for one failed fetch and its retry before the list counts as too old.
            if status.maximumAge < 2 * status.refresh {
                throw ConfigurationError.invalid("androidAttestation.statusList.maximumAgeSeconds", "androidAttestation.statusList.maximumAgeSeconds is at least twice refreshSeconds")
            }
        }
        if let play = playIntegrity {
            guard (play.decryptionKeyFile == nil) == (play.verificationKeyFile == nil) else {
                throw ConfigurationError.invalid("androidAttestation.playIntegrity", "androidAttestation.playIntegrity: classic tokens need decryptionKeyFile and verificationKeyFile")
            }
            guard play.decryptionKeyFile != nil || play.standard != nil else {
                throw ConfigurationError.invalid("androidAttestation.playIntegrity", "androidAttestation.playIntegrity takes classic tokens (decryptionKeyFile, verificationKeyFile), standard ones (standard), or both")
            }
            for (name, url) in [("decodeUrl", play.standard?.decodeUrl), ("tokenUrl", play.standard?.tokenUrl)] {
                // The service account's access token travels there: plain HTTP only to this machine.
                guard let url, !Self.isSecureOrLocal(url) else { continue }
                throw ConfigurationError.invalid("androidAttestation.playIntegrity.standard.\(name)", "androidAttestation.playIntegrity.standard.\(name) is https (plain http only to this machine)")
            }
            if let budget = play.standard?.decodesPerMinute, budget < 1 {
                throw ConfigurationError.invalid("androidAttestation.playIntegrity.standard.decodesPerMinute", "androidAttestation.playIntegrity.standard.decodesPerMinute is at least 1")
            }
            if let package = play.standard?.packageName,
                package.isEmpty || !package.utf8.allSatisfy({ byte in
                    (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte | 0x20) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                })
            {
                throw ConfigurationError.invalid("androidAttestation.playIntegrity.standard.packageName", "androidAttestation.playIntegrity.standard.packageName is an Android package name (letters, digits, . and _)")
            }
        }
        if let age = playIntegrity?.maximumAgeSeconds, !(10...3600).contains(age) {
            throw ConfigurationError.invalid("androidAttestation.playIntegrity.maximumAgeSeconds", "androidAttestation.playIntegrity.maximumAgeSeconds is 10 to 3600")
        }
        if let leaked = leakedKeys {
            if !(60...Int(30 * 86_400)).contains(leaked.window) {
                throw ConfigurationError.invalid("androidAttestation.leakedKeys.windowSeconds", "androidAttestation.leakedKeys.windowSeconds is 60 to 2592000 (30 days)")
            }
            guard leaked.flagAt >= 1, leaked.blockAt >= leaked.flagAt else {
                throw ConfigurationError.invalid("androidAttestation.leakedKeys", "androidAttestation.leakedKeys: 1 ≤ flagAt ≤ blockAt")
            }
        }
    }

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
        return PlayIntegrityPolicy(
            packageNames: Set(packages),
            certificateDigests: Set((signingDigests ?? []).compactMap(Self.hexBytes)),
            requireRecognizedApp: settings.requireRecognizedApp ?? true,
            minimumDeviceIntegrity: level,
            requireLicensed: settings.requireLicensed ?? false,
            maximumAge: TimeInterval(settings.maximumAgeSeconds ?? 300)
        )
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

    /// The policy, with the roots from `rootsFile` when set.
    func policy() throws -> AndroidAttestationPolicy {
        var roots = GoogleAttestationRoots.certificates
        if let file = rootsFile {
            do {
                roots = try PEMCertificates.read(file: file)
            } catch let error as ConfigurationError {
                throw error.under("androidAttestation.rootsFile")
            }
        }
        return AndroidAttestationPolicy(
            roots: roots,
            packageNames: Set(packageNames ?? []),
            signingDigests: Set((signingDigests ?? []).compactMap(Self.hexBytes)),
            minimumSecurityLevel: minimumSecurityLevel == .strongbox ? .strongBox : .trustedEnvironment,
            requireLockedBootloader: requireLockedBootloader ?? true,
            requireVerifiedBoot: requireVerifiedBoot ?? true,
            minimumOSPatchLevel: minimumPatchLevel,
            allowSoftware: allowSoftware ?? false
        )
    }

    /// An https URL, or plain http to this machine (by its host exactly: `localhost.example` is not).
    static func isSecureOrLocal(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), url.user == nil else {
            return false
        }
        if scheme == "https" { return true }
        return scheme == "http" && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
    }

    /// A digest in hex, as `apksigner` prints it, or with colons, as `keytool` does.
    static func hexBytes(_ text: String) -> [UInt8]? {
        Hex.decode(text.replacingOccurrences(of: ":", with: ""))
    }
}
