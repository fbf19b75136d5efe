// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetAndroid
import SignetCore
import SwiftASN1
import X509

/// What `POST /signet/v1/devices/android` checks an Android key attestation with: the verifier
/// (Google's roots or configured ones, the policy), Google's revocation list as last fetched, and
/// the leaked-key count.
public struct AndroidAttestationRegistrar: Sendable {
    public var verifier: AndroidKeyAttestationVerifier
    /// The revocation list in force, or `nil` to check none; throws
    /// `attestation_status_unavailable` when the last good copy is older than allowed.
    public var statusList: @Sendable () throws -> AttestationStatusList?
    /// Counts attestations per batch certificate; `nil` counts none.
    public var batchGuard: AttestationBatchGuard?
    /// Play Integrity at registration: a classic token whose nonce is the registration's challenge.
    public var playIntegrity: PlayIntegrityCheck?

    /// A Play Integrity verdict asked of a registration besides the key attestation.
    public struct PlayIntegrityCheck: Sendable {
        /// Classic tokens, decrypted and verified locally with the Play Console's keys.
        public var classic: PlayIntegrityVerifier?
        /// Standard tokens, decoded by Google's `decodeIntegrityToken` (the server's HTTP client).
        public var standard: (@Sendable (_ token: String) async throws -> PlayIntegrityVerdict)?
        /// What the verdict must say (a standard verdict is judged here; a classic one by `classic`).
        public var policy: PlayIntegrityPolicy
        /// Every registration carries a token (`token_missing` otherwise); when false, one is
        /// checked when present.
        public var required: Bool

        public init(
            classic: PlayIntegrityVerifier?,
            standard: (@Sendable (_ token: String) async throws -> PlayIntegrityVerdict)? = nil,
            policy: PlayIntegrityPolicy,
            required: Bool
        ) {
            self.classic = classic
            self.standard = standard
            self.policy = policy
            self.required = required
        }

        /// The verdict of `token` (`classic`, or `standard` when `standard` is true), judged with
        /// `nonce` as the token's nonce (classic) or request hash (standard).
        public func verdict(_ token: String, standard isStandard: Bool, nonce: String, now: Date) async throws -> PlayIntegrityVerdict {
            if isStandard {
                guard let standard else {
                    throw SignetError(.tokenInvalid, "this server takes classic Play Integrity tokens only")
                }
                let verdict = try await standard(token)
                try policy.judge(verdict, nonce: nonce, now: now)
                return verdict
            }
            guard let classic else { throw SignetError(.tokenInvalid, "this server takes standard Play Integrity tokens only") }
            return try classic.verify(token, nonce: nonce, now: now)
        }
    }

    public init(
        verifier: AndroidKeyAttestationVerifier,
        statusList: @escaping @Sendable () throws -> AttestationStatusList? = { nil },
        batchGuard: AttestationBatchGuard? = nil,
        playIntegrity: PlayIntegrityCheck? = nil
    ) {
        self.verifier = verifier
        self.statusList = statusList
        self.batchGuard = batchGuard
        self.playIntegrity = playIntegrity
    }

    /// What the record keeps of a Play Integrity verdict: the verdicts, the opt-in environment
    /// signals the verdict carries, and the `flags` a flagging policy let through (their codes).
    static func attributes(_ verdict: PlayIntegrityVerdict, flags: [String] = []) -> [String: String] {
        var attributes = [
            "play_app_recognition": verdict.appIntegrity?.appRecognitionVerdict ?? "-",
            "play_device_integrity": (verdict.deviceIntegrity?.deviceRecognitionVerdict ?? []).joined(separator: ","),
            "play_licensing": verdict.accountDetails?.appLicensingVerdict ?? "-",
        ]
        let environment = verdict.environmentDetails
        let device = verdict.deviceIntegrity
        attributes["play_protect"] = environment?.playProtectVerdict
        attributes["play_apps_detected"] = environment?.appAccessRiskVerdict?.appsDetected.map { $0.joined(separator: ",") }
        attributes["play_device_activity"] = device?.recentDeviceActivity?.deviceActivityLevel
        attributes["play_sdk_version"] = device?.deviceAttributes?.sdkVersion.map(String.init)
        attributes["play_device_recall"] = device?.deviceRecall?.values.map { values in
            values.setBits.isEmpty ? "none" : values.setBits.sorted().map(String.init).joined(separator: ",")
        }
        if !flags.isEmpty { attributes[StoreKeyResolver.integrityFlagsAttribute] = flags.joined(separator: ",") }
        return attributes
    }

    /// The name a batch is counted under: SHA-256 of its public key (SubjectPublicKeyInfo), hex. The
    /// key, not the certificate: the same key under another certificate (or another encoding of the
    /// same signature) is the same batch.
    public static func batchName(_ certificate: Certificate) -> String {
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate.publicKey)) != nil else { return "unknown" }
        return Hex.encode(SHA256.hash(data: serializer.serializedBytes))
    }

    /// What the device record keeps of the attestation (the console and `GET /signet/v1/devices/{id}`
    /// show it).
    static func attributes(_ verified: VerifiedAndroidAttestation) -> [String: String] {
        let record = verified.description
        var attributes = [
            "platform": "android",
            "security_level": verified.securityLevel.description,
            "attestation_version": String(record.attestationVersion),
            "keymaster_version": String(record.keymasterVersion),
            "attestation_batch": batchName(verified.batchCertificate),
        ]
        if let app = record.enforced(\.attestationApplicationID) {
            attributes["package"] = app.packages.map { "\($0.name)@\($0.version)" }.joined(separator: ",")
            attributes["signing_digests"] = app.signatureDigests.map(Hex.encode).joined(separator: ",")
        }
        if let root = record.hardwareEnforced.rootOfTrust ?? record.softwareEnforced.rootOfTrust {
            attributes["verified_boot_state"] = root.verifiedBootState.description
            attributes["device_locked"] = String(root.deviceLocked)
        }
        if let level = record.enforced(\.osVersion) { attributes["os_version"] = String(level) }
        if let level = record.enforced(\.osPatchLevel) { attributes["os_patch_level"] = String(level) }
        if let level = record.enforced(\.vendorPatchLevel) { attributes["vendor_patch_level"] = String(level) }
        if let level = record.enforced(\.bootPatchLevel) { attributes["boot_patch_level"] = String(level) }
        return attributes
    }
}
