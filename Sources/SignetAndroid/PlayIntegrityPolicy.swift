// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// What a server asks of a Play Integrity verdict.
public struct PlayIntegrityPolicy: Sendable {
    /// Google's device integrity labels, weakest first.
    public enum DeviceIntegrity: Int, Sendable, CaseIterable, Comparable {
        /// A genuine Android build that may be rooted or unlocked.
        case basic
        /// A Play-certified device with a locked bootloader.
        case device
        /// A device with a recent security patch and hardware-backed boot integrity.
        case strong

        public var label: String {
            switch self {
            case .basic: "MEETS_BASIC_INTEGRITY"
            case .device: "MEETS_DEVICE_INTEGRITY"
            case .strong: "MEETS_STRONG_INTEGRITY"
            }
        }

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// Package names allowed; any when empty.
    public var packageNames: Set<String>
    /// SHA-256 digests of the app signing certificate allowed (raw bytes); any when empty.
    public var certificateDigests: Set<[UInt8]>
    /// Refuse an app Google Play does not recognise (sideloaded, re-signed): on by default.
    public var requireRecognizedApp: Bool
    /// The weakest device integrity taken: `device` by default.
    public var minimumDeviceIntegrity: DeviceIntegrity
    /// Refuse an account without a Play licence for the app: off by default.
    public var requireLicensed: Bool
    /// How old a token may be: 300 s by default (Google's own advice for classic requests is minutes).
    public var maximumAge: TimeInterval
    /// The environment signals of 2026 (each opt-in in the Play Console; unchecked by default).
    public var environment: Environment

    /// What a policy asks of the opt-in signals. A signal the policy asks about must be in the
    /// verdict: one missing (not turned on in the Play Console, or not evaluated) is refused, so a
    /// check cannot pass by the signal's absence.
    public struct Environment: Sendable, Hashable {
        /// The highest Play Protect risk taken, in Google's order: `NO_ISSUES`, `NO_DATA`,
        /// `POSSIBLE_RISK`, `MEDIUM_RISK`, `HIGH_RISK`.
        public var maximumPlayProtectRisk: String?
        /// `appsDetected` values refused (`KNOWN_CAPTURING`, `UNKNOWN_CONTROLLING`…).
        public var refusedAppsDetected: Set<String>
        /// The busiest recent device activity taken, 1 to 4 (`LEVEL_1`…`LEVEL_4`).
        public var maximumDeviceActivityLevel: Int?
        /// The oldest Android SDK version taken (`deviceAttributes.sdkVersion`).
        public var minimumSDKVersion: Int?
        /// Device recall bits (1 to 3) that refuse a device when set: the backend marked it.
        public var refusedRecallBits: Set<Int>
        /// What a signal outside the policy does: refuse the registration or request (the
        /// default), or let it through flagged, the findings kept in the device record and sent
        /// upstream, to see what enforcing would refuse or to let the backend decide.
        public var action: Action

        public enum Action: String, Sendable, Hashable {
            case refuse
            case flag
        }

        public init() {
            maximumPlayProtectRisk = nil
            refusedAppsDetected = []
            maximumDeviceActivityLevel = nil
            minimumSDKVersion = nil
            refusedRecallBits = []
            action = .refuse
        }

        public static let playProtectOrder = ["NO_ISSUES", "NO_DATA", "POSSIBLE_RISK", "MEDIUM_RISK", "HIGH_RISK"]
        public static let appsDetectedValues: Set<String> = [
            "KNOWN_INSTALLED", "KNOWN_CAPTURING", "KNOWN_CONTROLLING", "KNOWN_OVERLAYS",
            "UNKNOWN_INSTALLED", "UNKNOWN_CAPTURING", "UNKNOWN_CONTROLLING", "UNKNOWN_OVERLAYS",
        ]

        /// Each signal outside the policy, in the order above, with its own code
        /// (`play_protect_risk`, `app_access_risk`, `device_activity_excessive`,
        /// `device_sdk_outdated`, `device_recalled`); none when the verdict meets it.
        public func findings(_ verdict: PlayIntegrityVerdict) -> [SignetError] {
            var found: [SignetError] = []
            if let maximum = maximumPlayProtectRisk {
                let said = verdict.environmentDetails?.playProtectVerdict
                if let limit = Self.playProtectOrder.firstIndex(of: maximum) {
                    if let said, let rank = Self.playProtectOrder.firstIndex(of: said) {
                        if rank > limit { found.append(SignetError(.playProtectRisk, "Play Protect reports \(said); at most \(maximum) is taken")) }
                    } else {
                        found.append(SignetError(.playProtectRisk, "the verdict has no Play Protect evaluation (\(said ?? "none"))"))
                    }
                } else {
                    found.append(SignetError(.playProtectRisk, "the policy's \(maximum) is not a Play Protect verdict"))
                }
            }
            if !refusedAppsDetected.isEmpty {
                if let detected = verdict.environmentDetails?.appAccessRiskVerdict?.appsDetected {
                    if let seen = detected.first(where: refusedAppsDetected.contains) {
                        found.append(SignetError(.appAccessRisk, "apps that may read or control this one run on the device (\(seen))"))
                    }
                } else {
                    found.append(SignetError(.appAccessRisk, "the verdict has no app access risk evaluation"))
                }
            }
            if let maximum = maximumDeviceActivityLevel {
                // UNEVALUATED (a device Google has too little history of, or does not trust) is no
                // level at all: refused with the rest, as the other asked-for signals are.
                let level = verdict.deviceIntegrity?.recentDeviceActivity?.deviceActivityLevel
                if let level, level.hasPrefix("LEVEL_"), let number = Int(level.dropFirst("LEVEL_".count)) {
                    if number > maximum {
                        found.append(SignetError(
                            .deviceActivityExcessive, "the device asked for integrity tokens at \(level) lately; at most LEVEL_\(maximum) is taken"))
                    }
                } else {
                    found.append(SignetError(.deviceActivityExcessive, "the verdict has no recent device activity level (\(level ?? "none"))"))
                }
            }
            if let minimum = minimumSDKVersion {
                if let sdk = verdict.deviceIntegrity?.deviceAttributes?.sdkVersion {
                    if sdk < minimum { found.append(SignetError(.deviceSDKOutdated, "the device runs Android SDK \(sdk); at least \(minimum) is taken")) }
                } else {
                    found.append(SignetError(.deviceSDKOutdated, "the verdict has no device SDK version"))
                }
            }
            if !refusedRecallBits.isEmpty {
                if let recall = verdict.deviceIntegrity?.deviceRecall?.values {
                    if let bit = recall.setBits.intersection(refusedRecallBits).min() {
                        found.append(SignetError(.deviceRecalled, "the backend marked this device (device recall bit \(bit))"))
                    }
                } else {
                    found.append(SignetError(.deviceRecalled, "the verdict has no device recall"))
                }
            }
            return found
        }

        /// Throws the first finding where the policy refuses; passes where it flags.
        func check(_ verdict: PlayIntegrityVerdict) throws {
            guard action == .refuse, let first = findings(verdict).first else { return }
            throw first
        }

        /// The codes of the findings a flagging policy lets through, for the record and the
        /// upstream (`Signet-Integrity-Flags`); none where the policy refuses.
        public func flags(_ verdict: PlayIntegrityVerdict) -> [String] {
            action == .flag ? findings(verdict).map(\.code.rawValue) : []
        }
    }

    public init(
        packageNames: Set<String> = [],
        certificateDigests: Set<[UInt8]> = [],
        requireRecognizedApp: Bool = true,
        minimumDeviceIntegrity: DeviceIntegrity = .device,
        requireLicensed: Bool = false,
        maximumAge: TimeInterval = 300
    ) {
        self.packageNames = packageNames
        self.certificateDigests = certificateDigests
        self.requireRecognizedApp = requireRecognizedApp
        self.minimumDeviceIntegrity = minimumDeviceIntegrity
        self.requireLicensed = requireLicensed
        self.maximumAge = maximumAge
        self.environment = Environment()
    }
}

extension PlayIntegrityPolicy {
    /// The checks on a verdict, however it was obtained (decrypted locally, or decoded by Google for
    /// a standard token), each with its name, in order: age (`token_expired`), nonce
    /// (`attestation_nonce_mismatch`), app (`app_id_mismatch`), verdicts
    /// (`integrity_verdict_insufficient`), the environment signals (each its own code, where the
    /// policy refuses: ``Environment/findings(_:)``).
    ///
    /// - Parameters:
    ///   - verdict: The verdict, as Google signed or decoded it.
    ///   - nonce: What the verdict's `nonce` (classic) or `requestHash` (standard) must be;
    ///     unchecked when `nil`.
    ///   - now: The verifier's time.
    public func checks(_ verdict: PlayIntegrityVerdict, nonce: String?, now: Date) -> [(name: String, run: () throws -> Void)] {
        [
            ("the token is at most \(Int(maximumAge)) s old", {
                guard let made = verdict.timestamp else { throw SignetError(.tokenInvalid, "the verdict has no timestampMillis") }
                let age = now.timeIntervalSince(made)
                // A minute of clock skew ahead; none behind beyond the age.
                guard age <= maximumAge, age >= -60 else {
                    throw SignetError(.tokenExpired, "the integrity token was made \(Int(age)) s ago; at most \(Int(maximumAge)) s is taken")
                }
            }),
            (nonce == nil ? "nonce (not checked)" : "the nonce is the server's", {
                guard let nonce else { return }
                let given = verdict.requestDetails?.nonce ?? verdict.requestDetails?.requestHash ?? ""
                guard ConstantTime.equals(Array(given.utf8), Array(nonce.utf8)) else {
                    throw SignetError(.attestationNonceMismatch, "the integrity token was requested for another nonce")
                }
            }),
            ("the app is allowed", {
                let app = verdict.appIntegrity
                // Google vouches for appIntegrity's package; requestDetails' is what the caller said.
                let package = app?.packageName
                if !packageNames.isEmpty, !packageNames.contains(package ?? "") {
                    throw SignetError(.appIDMismatch, "the token is for \(package ?? "no package"), not an allowed package")
                }
                if !certificateDigests.isEmpty {
                    let digests = (app?.certificateSha256Digest ?? []).compactMap { Base64.urlDecode($0) ?? Base64.decode($0) }
                    guard digests.contains(where: certificateDigests.contains) else {
                        throw SignetError(.appIDMismatch, "the app is not signed with an allowed certificate")
                    }
                }
            }),
            ("the verdicts meet the policy", {
                if requireRecognizedApp, verdict.appIntegrity?.appRecognitionVerdict != "PLAY_RECOGNIZED" {
                    throw SignetError(
                        .integrityVerdictInsufficient,
                        "Google Play does not recognise the app (\(verdict.appIntegrity?.appRecognitionVerdict ?? "no verdict"))"
                    )
                }
                let level = verdict.deviceIntegrityLevel
                guard let level, level >= minimumDeviceIntegrity else {
                    throw SignetError(
                        .integrityVerdictInsufficient,
                        "the device meets \(level?.label ?? "no integrity"); \(minimumDeviceIntegrity.label) is required"
                    )
                }
                if requireLicensed, verdict.accountDetails?.appLicensingVerdict != "LICENSED" {
                    throw SignetError(.integrityVerdictInsufficient, "the account has no licence for the app")
                }
            }),
            ("the environment meets the policy", { try environment.check(verdict) }),
        ]
    }

    /// Runs ``checks(_:nonce:now:)``; throws the first refusal.
    public func judge(_ verdict: PlayIntegrityVerdict, nonce: String?, now: Date) throws {
        for check in checks(verdict, nonce: nonce, now: now) { try check.run() }
    }
}

