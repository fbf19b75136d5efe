// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetAndroid
import SignetCore

extension GatewayConfiguration {
    /// Android Key Attestation registration (`POST /signet/v1/devices/android`); off when absent.
    public struct AndroidAttestation: Codable, Sendable, Equatable {
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

        /// Devices per batch certificate in a sliding window.
        public struct LeakedKeys: Codable, Sendable, Equatable {
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
        try playIntegrity?.validate()
        if let leaked = leakedKeys {
            if !(60...Int(30 * 86_400)).contains(leaked.window) {
                throw ConfigurationError.invalid("androidAttestation.leakedKeys.windowSeconds", "androidAttestation.leakedKeys.windowSeconds is 60 to 2592000 (30 days)")
            }
            guard leaked.flagAt >= 1, leaked.blockAt >= leaked.flagAt else {
                throw ConfigurationError.invalid("androidAttestation.leakedKeys", "androidAttestation.leakedKeys: 1 ≤ flagAt ≤ blockAt")
            }
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
