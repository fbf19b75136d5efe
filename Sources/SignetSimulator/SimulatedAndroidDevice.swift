// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetAndroid
import SignetCore
import SwiftASN1
import X509

/// A software Android device: a P-256 key "in its Keystore" and the attestation chain the Keystore
/// would return for it — leaf with the `KeyDescription` record, the batch certificate, the
/// development root — with every field of the record settable, so tests can make each refusal
/// (software level, unlocked bootloader, old patch level, another app…).
public struct SimulatedAndroidDevice: Sendable {
    /// What the device's record says.
    public struct Profile: Sendable {
        public var attestationVersion = 300
        public var securityLevel: KeyDescription.SecurityLevel = .trustedEnvironment
        public var deviceLocked = true
        public var verifiedBootState: RootOfTrust.VerifiedBootState = .verified
        /// `ABBCCDD`: 14.0.0.
        public var osVersion = 140_000
        /// `YYYYMM`.
        public var osPatchLevel = 202_410
        public var vendorPatchLevel = 20_241_001
        public var bootPatchLevel = 20_241_001
        public var packageName = "com.example.scores"
        public var packageVersion = 14
        /// SHA-256 of the app's signing certificates.
        public var signingDigests: [[UInt8]] = [SimulatedAndroidDevice.developmentSigningDigest]
        /// Keymaster's `KeyOrigin`: 0 generated in the hardware, 2 imported.
        public var origin = 0
        /// Keymaster's `KeyPurpose`s: sign and verify.
        public var purposes: Set<Int> = [2, 3]

        public init() {}
    }

    /// The digest the default profile's app is signed with: SHA-256 of `signet-simulator-app`.
    public static let developmentSigningDigest: [UInt8] = Array(SHA256.hash(data: Array("signet-simulator-app".utf8)))

    public let privateKey: P256.Signing.PrivateKey
    public var profile: Profile
    public let batch: DevelopmentAndroidAttestationCA.Batch
    public let root: Certificate

    public init(ca: DevelopmentAndroidAttestationCA, batch: DevelopmentAndroidAttestationCA.Batch? = nil, profile: Profile = Profile()) {
        self.privateKey = P256.Signing.PrivateKey()
        self.profile = profile
        self.batch = batch ?? ca.batch
        self.root = ca.root
    }

    /// The key the app signs requests with once registered (`ecdsa-p256-sha256`).
    public var signingKey: SigningKey { SigningKey(p256: privateKey) }

    /// The chain for a key made with `challenge` as `attestationChallenge`, leaf first, DER.
    public func attest(challenge: [UInt8], now: Date = Date()) throws -> [[UInt8]] {
        let level = profile.securityLevel
        var enforced = AuthorizationList()
        enforced.purposes = profile.purposes
        enforced.algorithm = 3  // EC
        enforced.keySize = 256
        enforced.ecCurve = 1  // P-256
        enforced.origin = profile.origin
        enforced.rootOfTrust = RootOfTrust(
            verifiedBootKey: Array(SHA256.hash(data: Array("signet-simulator-boot-key".utf8))),
            deviceLocked: profile.deviceLocked,
            verifiedBootState: profile.verifiedBootState
        )
        enforced.osVersion = profile.osVersion
        enforced.osPatchLevel = profile.osPatchLevel
        enforced.vendorPatchLevel = profile.vendorPatchLevel
        enforced.bootPatchLevel = profile.bootPatchLevel
        // The OS vouches for the app and the creation time; the secure hardware for the rest (or,
        // at software level, nothing does).
        var software = AuthorizationList()
        software.creationDateTime = Int(now.timeIntervalSince1970 * 1000)
        software.attestationApplicationID = AttestationApplicationID(
            packages: [.init(name: profile.packageName, version: profile.packageVersion)],
            signatureDigests: profile.signingDigests
        )
        let record = KeyDescription(
            attestationVersion: profile.attestationVersion,
            attestationSecurityLevel: level,
            keymasterVersion: profile.attestationVersion,
            keymasterSecurityLevel: level,
            attestationChallenge: challenge,
            softwareEnforced: level == .software ? Self.merged(software, enforced) : software,
            hardwareEnforced: level == .software ? AuthorizationList() : enforced
        )
        let leaf = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(privateKey.publicKey),
            notValidBefore: now.addingTimeInterval(-60),
            notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
            issuer: batch.certificate.subject,
            subject: try DistinguishedName { CommonName("Android Keystore Key") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(oid: KeyDescription.extensionOID, critical: false, value: ArraySlice(try record.derEncoded()))
            },
            issuerPrivateKey: .init(batch.key)
        )
        return try ([leaf] + batch.certificates + [root]).map { certificate in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
    }

    /// At software level the OS vouches for everything.
    private static func merged(_ software: AuthorizationList, _ enforced: AuthorizationList) -> AuthorizationList {
        var list = enforced
        list.creationDateTime = software.creationDateTime
        list.attestationApplicationID = software.attestationApplicationID
        return list
    }
}
