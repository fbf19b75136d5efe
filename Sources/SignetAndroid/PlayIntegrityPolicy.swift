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
    }
}

extension PlayIntegrityPolicy {
    /// The checks on a verdict, however it was obtained (decrypted locally, or decoded by Google for
    /// a standard token), each with its name, in order: age (`token_expired`), nonce
    /// (`attestation_nonce_mismatch`), app (`app_id_mismatch`), verdicts
    /// (`integrity_verdict_insufficient`).
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
        ]
    }

    /// Runs ``checks(_:nonce:now:)``; throws the first refusal.
    public func judge(_ verdict: PlayIntegrityVerdict, nonce: String?, now: Date) throws {
        for check in checks(verdict, nonce: nonce, now: now) { try check.run() }
    }
}

