// SPDX-License-Identifier: Apache-2.0
import Foundation

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
