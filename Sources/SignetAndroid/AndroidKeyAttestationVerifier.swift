// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
import X509

/// Verifies an Android Key Attestation: the certificate chain the Keystore returns for a key made
/// with the server's challenge as `attestationChallenge`, leaf first.
///
/// In order, cheapest first, each step with its own reason code: the certificates parse; the last
/// is one of the policy's roots (`attestation_root_unknown`, compared by public key, so its own
/// signature needs no check); all are valid at the time given (`attestation_expired`); each is
/// signed by the next, from the root down (`attestation_chain_invalid`); none is revoked or suspended in
/// Google's status list (`attestation_revoked`); the attestation record parses and carries the
/// challenge (`attestation_nonce_mismatch`); then the policy: security level, boot state, patch
/// level, app (`attestation_security_level`, `attestation_boot_state`, `attestation_patch_level`,
/// `app_id_mismatch`), and a P-256 key (`attestation_key_mismatch`).
///
/// The chain is checked certificate by certificate rather than by RFC 5280 path building, as
/// Google's own library does: attestation certificates are not named for path building (every
/// key is `CN=Android Keystore Key`), and chains with an app-provided attestation key (KeyMint
/// 200+) put one attested key under another. The record read is that of the leaf-most certificate
/// that has one.
public struct AndroidKeyAttestationVerifier: Sendable {
    public var policy: AndroidAttestationPolicy

    public init(policy: AndroidAttestationPolicy) {
        self.policy = policy
    }

    /// The verified attestation, or the first step's refusal.
    public func verify(chain: [[UInt8]], challenge: [UInt8], now: Date, status: AttestationStatusList?) throws
        -> VerifiedAndroidAttestation
    {
        let inspection = inspect(chain: chain, challenge: challenge, now: now, status: status)
        if let failure = inspection.steps.firstRefusal { throw failure }
        guard let verified = inspection.verified else {
            throw SignetError(.attestationChainInvalid, "the attestation did not verify")
        }
        return verified
    }

    /// Every step, passed or not, stopping at the first refusal; what was read on the way.
    public func inspect(chain: [[UInt8]], challenge: [UInt8], now: Date, status: AttestationStatusList?)
        -> AndroidAttestationInspection
    {
        var inspection = AndroidAttestationInspection()
        func step(_ name: String, _ body: () throws -> Void) -> Bool {
            let step = InspectionStep.run(name, refusing: .attestationChainInvalid, body)
            inspection.steps.append(step)
            return step.error == nil
        }
        guard
            step("the certificates parse", {
                guard (2...10).contains(chain.count) else {
                    throw SignetError(.attestationChainInvalid, "a key attestation chain has 2 to 10 certificates, not \(chain.count)")
                }
                inspection.certificates = try chain.enumerated().map { index, der in
                    do {
                        return try Certificate(derEncoded: der)
                    } catch {
                        throw SignetError(.attestationChainInvalid, "certificate \(index) does not parse")
                    }
                }
            })
        else { return inspection }
        let certificates = inspection.certificates
        guard
            step("the root is a trusted attestation root", {
                let root = certificates[certificates.count - 1]
                guard policy.roots.contains(where: { $0.publicKey == root.publicKey }) else {
                    throw SignetError(.attestationRootUnknown, "the chain ends in \(root.subject), not a trusted attestation root")
                }
            }),
            step("every certificate is valid at \(now.formatted(.iso8601))", {
                for (index, certificate) in certificates.enumerated()
                where now < certificate.notValidBefore || now > certificate.notValidAfter {
                    throw SignetError(
                        .attestationExpired,
                        "certificate \(index) (\(certificate.subject)) is valid from \(certificate.notValidBefore) to \(certificate.notValidAfter)"
                    )
                }
            }),
            step("each certificate is signed by the next, from the root down", {
                // From the root down, after the cheap checks: a made-up chain costs one signature
                // check at most, however many large keys it carries.
                for index in certificates.indices.dropLast().reversed() {
                    let (subject, issuer) = (certificates[index], certificates[index + 1])
                    guard issuer.publicKey.isValidSignature(subject.signature, for: subject) else {
                        throw SignetError(.attestationChainInvalid, "certificate \(index) is not signed by certificate \(index + 1)")
                    }
                }
            }),
            step(status == nil ? "revocation status (no list given)" : "no certificate is revoked or suspended", {
                guard let status else { return }
                for (index, certificate) in certificates.enumerated() {
                    if let entry = status.entry(for: certificate) {
                        throw SignetError(
                            .attestationRevoked,
                            "certificate \(index) (serial \(AttestationStatusList.hex(Array(certificate.serialNumber.bytes)))) is \(entry.status)\(entry.reason.map { " (\($0))" } ?? "")"
                        )
                    }
                }
            }),
            step("the leaf's attestation record parses", {
                // The record is the leaf's, always. Above it, a certificate with a record of its own
                // must be an attestation key (KeyMint 200's app-provided keys) and anything else a
                // CA: otherwise any genuine device's signing key could sign a certificate with a
                // made-up record for a software key, and the chain would still end in Google's root.
                guard let value = certificates[0].extensions[oid: KeyDescription.extensionOID] else {
                    throw SignetError(.attestationChainInvalid, "the leaf has no key attestation extension")
                }
                inspection.attestedIndex = 0
                inspection.description = try KeyDescription(derEncoded: Array(value.value))
                for index in certificates.indices.dropFirst() {
                    try Self.checkIssuer(certificates[index], at: index)
                }
            }),
            let description = inspection.description,
            step("the challenge is the server's", {
                guard ConstantTime.equals(description.attestationChallenge, challenge) else {
                    throw SignetError(.attestationNonceMismatch, "the attested challenge is not the one the server issued")
                }
            }),
            step("the security level is \(policy.allowSoftware ? "any (development)" : "at least \(policy.minimumSecurityLevel)")", {
                let level = min(description.attestationSecurityLevel, description.keymasterSecurityLevel)
                guard level >= policy.minimumSecurityLevel || (policy.allowSoftware && level == .software) else {
                    throw SignetError(
                        .attestationSecurityLevel,
                        "the key is attested at \(level) level; \(policy.minimumSecurityLevel) or above is required"
                    )
                }
            }),
            step(Self.bootStepName(policy), {
                guard description.attestationSecurityLevel != .software else { return }  // nothing to vouch for it
                guard let root = description.hardwareEnforced.rootOfTrust else {
                    throw SignetError(.attestationBootState, "the secure hardware reports no root of trust")
                }
                if policy.requireLockedBootloader, !root.deviceLocked {
                    throw SignetError(.attestationBootState, "the bootloader is unlocked")
                }
                if policy.requireVerifiedBoot, root.verifiedBootState != .verified {
                    throw SignetError(.attestationBootState, "verified boot is \(root.verifiedBootState)")
                }
            }),
            step("the security patch level is recent enough", {
                guard let minimum = policy.minimumOSPatchLevel else { return }
                guard let level = description.enforced(\.osPatchLevel), level >= minimum else {
                    throw SignetError(
                        .attestationPatchLevel,
                        "the OS patch level is \(description.enforced(\.osPatchLevel).map(String.init) ?? "unknown"), older than \(minimum)"
                    )
                }
            }),
            step("the app is allowed", {
                guard !policy.packageNames.isEmpty || !policy.signingDigests.isEmpty else { return }
                guard let app = description.enforced(\.attestationApplicationID) else {
                    throw SignetError(.appIDMismatch, "the attestation names no app")
                }
                if !policy.packageNames.isEmpty, !app.packages.contains(where: { policy.packageNames.contains($0.name) }) {
                    throw SignetError(.appIDMismatch, "the app is \(app.packages.map(\.name).joined(separator: ", ")), not an allowed package")
                }
                if !policy.signingDigests.isEmpty, !app.signatureDigests.contains(where: { policy.signingDigests.contains($0) }) {
                    throw SignetError(.appIDMismatch, "the app is not signed with an allowed certificate")
                }
            }),
            step("the attested key is a P-256 signing key made in the secure hardware", {
                let leaf = certificates[0]
                guard P256.Signing.PublicKey(leaf.publicKey) != nil else {
                    throw SignetError(.attestationKeyMismatch, "the attested key is not an EC P-256 key (ecdsa-p256-sha256 is what devices sign with)")
                }
                guard description.enforced(\.purposes)?.contains(Self.purposeSign) == true else {
                    throw SignetError(.attestationKeyMismatch, "the attested key is not for signing")
                }
                // An imported key (origin 2) was outside the hardware once: its record vouches for nothing.
                guard description.enforced(\.origin) == Self.originGenerated else {
                    throw SignetError(.attestationKeyMismatch, "the attested key was not generated in the secure hardware")
                }
            })
        else { return inspection }
        let leaf = certificates[0]
        inspection.verified = VerifiedAndroidAttestation(
            publicKeyDER: (try? leaf.publicKey.serializeAsPEM().derBytes) ?? [],
            description: description,
            // The certificate that signed the attested one: the per-batch key a leaked keybox shares.
            batchCertificate: certificates[1],
            issuers: Self.countedIssuers(certificates)
        )
        return inspection
    }

    /// The issuers a key is counted under for the leaked-key bound: every certificate between the
    /// attested one and the root, less the CAs Google runs for every device — the run of Google's
    /// own certificates (`O=Google LLC`: the remote key provisioning CAs `Droid CA2`, `Droid CA3`)
    /// right below the root, which vouch for whole fleets and would lock every device out at the
    /// first `blockAt` registrations. Only a prefix is dropped: a leaked batch key sits below it, and
    /// whatever it signs is counted under it too, fresh intermediates or not.
    static func countedIssuers(_ certificates: [Certificate]) -> [Certificate] {
        var issuers = Array(certificates.dropFirst().dropLast())
        while let top = issuers.last, top.extensions[oid: KeyDescription.extensionOID] == nil,
            top.subject.contains(where: { $0.contains { $0.type == .RDNAttributeType.organizationName && $0.value.description == "Google LLC" } })
        {
            issuers.removeLast()
        }
        return issuers
    }

    /// Keymaster's `KeyPurpose`: SIGN, and ATTEST_KEY (KeyMint 200).
    static let purposeSign = 2
    static let purposeAttestKey = 7
    /// Keymaster's `KeyOrigin`: GENERATED.
    static let originGenerated = 0

    /// A certificate above the leaf signs certificates: an attestation key (its own record says
    /// ATTEST_KEY and nothing else) or a CA.
    static func checkIssuer(_ certificate: Certificate, at index: Int) throws {
        if let value = certificate.extensions[oid: KeyDescription.extensionOID] {
            let record = try KeyDescription(derEncoded: Array(value.value))
            guard record.hardwareEnforced.purposes == [purposeAttestKey], record.attestationSecurityLevel != .software else {
                throw SignetError(
                    .attestationChainInvalid,
                    "certificate \(index) is an attested key that is not a hardware attestation key: it cannot vouch for the one below"
                )
            }
            return
        }
        guard let constraints = try? certificate.extensions.basicConstraints, case .isCertificateAuthority = constraints else {
            throw SignetError(.attestationChainInvalid, "certificate \(index) (\(certificate.subject)) signs the one below but is not a CA")
        }
    }
}

extension AndroidKeyAttestationVerifier {
    static func bootStepName(_ policy: AndroidAttestationPolicy) -> String {
        switch (policy.requireLockedBootloader, policy.requireVerifiedBoot) {
        case (true, true): "the device boots verified and locked"
        case (true, false): "the bootloader is locked"
        case (false, true): "the device boots verified"
        case (false, false): "boot state (not required)"
        }
    }
}

/// Every step of a key attestation check, passed or not, and what was read.
public struct AndroidAttestationInspection: Sendable {
    public typealias Step = InspectionStep

    public var steps: [Step] = []
    public var certificates: [Certificate] = []
    /// The index of the certificate whose record was read.
    public var attestedIndex: Int?
    public var description: KeyDescription?
    /// Set only when every step passed.
    public var verified: VerifiedAndroidAttestation?

    public var passed: Bool { verified != nil && steps.allSatisfy { $0.error == nil } }
}

/// What a verified key attestation establishes.
public struct VerifiedAndroidAttestation: Sendable {
    /// The attested key's SubjectPublicKeyInfo (DER): the device's signing key.
    public var publicKeyDER: [UInt8]
    public var description: KeyDescription
    /// The certificate that signed the attested one, per device batch (a leaked keybox's).
    public var batchCertificate: Certificate
    /// The certificates between the attested one and the root that the leaked-key count counts
    /// under (``AndroidKeyAttestationVerifier``'s `countedIssuers`): all but Google's fleet-wide
    /// CAs below the root, so a leaked batch key hidden under fresh intermediates is still counted.
    public var issuers: [Certificate]

    public var securityLevel: KeyDescription.SecurityLevel {
        min(description.attestationSecurityLevel, description.keymasterSecurityLevel)
    }
    public var packageNames: [String] { description.enforced(\.attestationApplicationID)?.packages.map(\.name) ?? [] }
}
