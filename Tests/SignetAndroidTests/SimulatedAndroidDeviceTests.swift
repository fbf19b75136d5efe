// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetAndroid
import SignetCore
import SignetSimulator
import SwiftASN1
import Testing
import X509

/// The simulated Android device writes its record with `KeyDescription.derEncoded()` and its chain
/// under a development root; the same verifier that checks real chains reads them. Each profile
/// field the policy decides on, set wrong, is refused with its own reason code.
@Suite struct SimulatedAndroidDeviceTests {
    static let now = Date(timeIntervalSince1970: 1_764_000_000)

    static func verify(
        _ device: SimulatedAndroidDevice,
        root: Certificate,
        challenge: [UInt8] = Array("challenge-1".utf8),
        attestedWith attested: [UInt8] = Array("challenge-1".utf8),
        policy: (inout AndroidAttestationPolicy) -> Void = { _ in }
    ) -> Result<VerifiedAndroidAttestation, SignetError> {
        var settings = AndroidAttestationPolicy(roots: [root], packageNames: ["com.example.scores"], signingDigests: [SimulatedAndroidDevice.developmentSigningDigest])
        policy(&settings)
        do {
            let chain = try device.attest(challenge: attested, now: now)
            return .success(try AndroidKeyAttestationVerifier(policy: settings).verify(chain: chain, challenge: challenge, now: now, status: nil))
        } catch let error as SignetError {
            return .failure(error)
        } catch {
            return .failure(SignetError(.internalError, "\(error)"))
        }
    }

    static func code(_ result: Result<VerifiedAndroidAttestation, SignetError>) -> SignetError.Code? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    @Test func theRecordReadsBackAsWritten() throws {
        var hardware = AuthorizationList()
        hardware.purposes = [2, 3]
        hardware.algorithm = 3
        hardware.ecCurve = 1
        hardware.rootOfTrust = RootOfTrust(verifiedBootKey: [1, 2], deviceLocked: true, verifiedBootState: .verified, verifiedBootHash: [3])
        hardware.osPatchLevel = 202_501
        hardware.vendorPatchLevel = 20_250_105
        var software = AuthorizationList()
        software.attestationApplicationID = AttestationApplicationID(packages: [.init(name: "a.b", version: 7)], signatureDigests: [[9, 9]])
        software.creationDateTime = 1_700_000_000_000
        let record = KeyDescription(
            attestationVersion: 400,
            attestationSecurityLevel: .strongBox,
            keymasterVersion: 400,
            keymasterSecurityLevel: .strongBox,
            attestationChallenge: [0, 1, 2],
            softwareEnforced: software,
            hardwareEnforced: hardware
        )
        #expect(try KeyDescription(derEncoded: try record.derEncoded()) == record)
    }

    @Test func aSimulatedDeviceVerifiesUnderItsDevelopmentRoot() throws {
        let ca = try DevelopmentAndroidAttestationCA(now: Self.now)
        let device = SimulatedAndroidDevice(ca: ca)
        let verified = try Self.verify(device, root: ca.root).get()
        #expect(verified.securityLevel == .trustedEnvironment)
        #expect(verified.packageNames == ["com.example.scores"])
        #expect(verified.batchCertificate == ca.batch.certificate)
        let key = try P256.Signing.PublicKey(derRepresentation: verified.publicKeyDER)
        #expect(key.rawRepresentation == device.privateKey.publicKey.rawRepresentation)
        // A device of another batch names that batch.
        let other = SimulatedAndroidDevice(ca: ca, batch: try ca.issueBatch(now: Self.now))
        #expect(try Self.verify(other, root: ca.root).get().batchCertificate == other.batch.certificate)
    }

    @Test func everyPolicyFieldSetWrongIsRefusedWithItsReason() throws {
        let ca = try DevelopmentAndroidAttestationCA(now: Self.now)
        func device(_ change: (inout SimulatedAndroidDevice.Profile) -> Void) -> SimulatedAndroidDevice {
            var profile = SimulatedAndroidDevice.Profile()
            change(&profile)
            return SimulatedAndroidDevice(ca: ca, profile: profile)
        }
        let plain = device { _ in }
        #expect(Self.code(Self.verify(plain, root: ca.root, challenge: Array("other".utf8))) == .attestationNonceMismatch)
        #expect(Self.code(Self.verify(plain, root: GoogleAttestationRoots.certificates[0])) == .attestationRootUnknown)
        let software = device { $0.securityLevel = .software }
        #expect(Self.code(Self.verify(software, root: ca.root)) == .attestationSecurityLevel)
        #expect(Self.code(Self.verify(software, root: ca.root) { $0.allowSoftware = true }) == nil)
        #expect(Self.code(Self.verify(plain, root: ca.root) { $0.minimumSecurityLevel = .strongBox }) == .attestationSecurityLevel)
        #expect(Self.code(Self.verify(device { $0.securityLevel = .strongBox }, root: ca.root) { $0.minimumSecurityLevel = .strongBox }) == nil)
        #expect(Self.code(Self.verify(device { $0.deviceLocked = false }, root: ca.root)) == .attestationBootState)
        #expect(Self.code(Self.verify(device { $0.verifiedBootState = .unverified }, root: ca.root)) == .attestationBootState)
        #expect(Self.code(Self.verify(device { $0.osPatchLevel = 202_301 }, root: ca.root) { $0.minimumOSPatchLevel = 202_401 }) == .attestationPatchLevel)
        #expect(Self.code(Self.verify(device { $0.packageName = "com.evil.scores" }, root: ca.root)) == .appIDMismatch)
        #expect(Self.code(Self.verify(device { $0.signingDigests = [Array(repeating: 1, count: 32)] }, root: ca.root)) == .appIDMismatch)
    }

    /// A genuine device's own signing key signs a certificate with a made-up record for a software
    /// key: every signature checks and the chain ends in the trusted root, but the record is not the
    /// leaf's hardware's. Refused: above the leaf only CAs and attestation keys may sign.
    @Test func aRecordSignedByAnotherDevicesKeyIsRefused() throws {
        let ca = try DevelopmentAndroidAttestationCA(now: Self.now)
        let genuine = SimulatedAndroidDevice(ca: ca)
        let genuineChain = try genuine.attest(challenge: Array("old".utf8), now: Self.now)
        let fake = P256.Signing.PrivateKey()
        var hardware = AuthorizationList()
        hardware.purposes = [2]
        hardware.algorithm = 3
        hardware.ecCurve = 1
        hardware.origin = 0
        hardware.rootOfTrust = RootOfTrust(verifiedBootKey: [1], deviceLocked: true, verifiedBootState: .verified)
        hardware.osPatchLevel = 202_410
        var software = AuthorizationList()
        software.attestationApplicationID = AttestationApplicationID(
            packages: [.init(name: "com.example.scores", version: 1)],
            signatureDigests: [SimulatedAndroidDevice.developmentSigningDigest]
        )
        let record = KeyDescription(attestationChallenge: Array("challenge-1".utf8), softwareEnforced: software, hardwareEnforced: hardware)
        let forged = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(fake.publicKey),
            notValidBefore: Self.now.addingTimeInterval(-60),
            notValidAfter: Self.now.addingTimeInterval(86_400),
            issuer: try DistinguishedName { CommonName("Android Keystore Key") },
            subject: try DistinguishedName { CommonName("Android Keystore Key") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Certificate.Extension(oid: KeyDescription.extensionOID, critical: false, value: ArraySlice(try record.derEncoded()))
            },
            issuerPrivateKey: .init(genuine.privateKey)
        )
        var serializer = DER.Serializer()
        try serializer.serialize(forged)
        let chain = [serializer.serializedBytes] + genuineChain
        let policy = AndroidAttestationPolicy(roots: [ca.root], packageNames: ["com.example.scores"])
        #expect(throws: SignetError.self) {
            _ = try AndroidKeyAttestationVerifier(policy: policy).verify(chain: chain, challenge: Array("challenge-1".utf8), now: Self.now, status: nil)
        }
        let inspection = AndroidKeyAttestationVerifier(policy: policy).inspect(chain: chain, challenge: Array("challenge-1".utf8), now: Self.now, status: nil)
        #expect(inspection.steps.compactMap(\.error).first?.code == .attestationChainInvalid)
        #expect(inspection.steps.compactMap(\.error).first?.reason.contains("certificate 1") == true)
    }

    /// An imported key, or one not for signing, is not a device key the hardware vouches for.
    @Test func anImportedOrNonSigningKeyIsRefused() throws {
        let ca = try DevelopmentAndroidAttestationCA(now: Self.now)
        var imported = SimulatedAndroidDevice.Profile()
        imported.origin = 2
        #expect(Self.code(Self.verify(SimulatedAndroidDevice(ca: ca, profile: imported), root: ca.root)) == .attestationKeyMismatch)
        var encryptOnly = SimulatedAndroidDevice.Profile()
        encryptOnly.purposes = [0, 1]
        #expect(Self.code(Self.verify(SimulatedAndroidDevice(ca: ca, profile: encryptOnly), root: ca.root)) == .attestationKeyMismatch)
    }

    /// A chain through an intermediate a batch key signed lists both as issuers (what the leaked-key
    /// count counts under).
    @Test func issuersAreEveryCertificateBetweenLeafAndRoot() throws {
        let ca = try DevelopmentAndroidAttestationCA(now: Self.now)
        let sub = try ca.issueBatch(under: ca.batch, now: Self.now)
        let verified = try Self.verify(SimulatedAndroidDevice(ca: ca, batch: sub), root: ca.root).get()
        #expect(verified.issuers == [sub.certificate, ca.batch.certificate])
        #expect(verified.batchCertificate == sub.certificate)
    }
}
