// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import X509

/// What a server asks of an Android key attestation.
public struct AndroidAttestationPolicy: Sendable {
    /// The roots a chain must end in: Google's (``GoogleAttestationRoots``) unless replaced.
    public var roots: [Certificate]
    /// Package names allowed to register; any when empty.
    public var packageNames: Set<String>
    /// SHA-256 digests of the signing certificates allowed (one must match); any when empty.
    public var signingDigests: Set<[UInt8]>
    /// The lowest attestation security level taken: the TEE by default, StrongBox possible.
    public var minimumSecurityLevel: KeyDescription.SecurityLevel
    /// Refuse an unlocked bootloader and a boot chain not verified by the device maker's key.
    public var requireLockedBootloader: Bool
    public var requireVerifiedBoot: Bool
    /// The oldest OS security patch level taken, `YYYYMM`; none when `nil`.
    public var minimumOSPatchLevel: Int?
    /// Development: a software-level attestation (an emulator) is taken.
    public var allowSoftware: Bool

    public init(
        roots: [Certificate] = GoogleAttestationRoots.certificates,
        packageNames: Set<String> = [],
        signingDigests: Set<[UInt8]> = [],
        minimumSecurityLevel: KeyDescription.SecurityLevel = .trustedEnvironment,
        requireLockedBootloader: Bool = true,
        requireVerifiedBoot: Bool = true,
        minimumOSPatchLevel: Int? = nil,
        allowSoftware: Bool = false
    ) {
        self.roots = roots
        self.packageNames = packageNames
        self.signingDigests = signingDigests
        self.minimumSecurityLevel = minimumSecurityLevel
        self.requireLockedBootloader = requireLockedBootloader
        self.requireVerifiedBoot = requireVerifiedBoot
        self.minimumOSPatchLevel = minimumOSPatchLevel
        self.allowSoftware = allowSoftware
    }
}
