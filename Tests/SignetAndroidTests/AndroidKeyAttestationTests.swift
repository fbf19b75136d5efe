// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetAndroid
import SignetCore
import SwiftASN1
import Testing
import X509

/// Real Android key attestation chains (`Tests/Vectors/android`, from google/android-key-attestation):
/// each verifies at its time with its challenge, and each way of breaking one is refused with its
/// own reason code.
@Suite struct AndroidKeyAttestationTests {
    /// The TEE chain's device is unlocked and not verified-boot (a developer's phone): the policy
    /// that takes it says so.
    static let unlockedAllowed = AndroidAttestationPolicy(requireLockedBootloader: false, requireVerifiedBoot: false)

    static func refusal(_ body: () throws -> Void) -> SignetError.Code? {
        do {
            try body()
            return nil
        } catch let error as SignetError {
            return error.code
        } catch {
            return .internalError
        }
    }

    /// All five of Google's published roots load and sign themselves; the 2021, 2022 and EC ones are
    /// those of the vectors (checked by openssl), the EC root by its published fingerprint.
    @Test func everyPublishedRootIsShipped() throws {
        let roots = GoogleAttestationRoots.certificates
        #expect(roots.count == GoogleAttestationRoots.pem.count)
        #expect(roots.count == 5)
        for root in roots { #expect(root.publicKey.isValidSignature(root.signature, for: root), "\(root.subject)") }
        let published = try AndroidVectors.chain("google-roots-2021-2022-2025.pem").map { try Certificate(derEncoded: $0) }
        #expect(published.count == 3 && published.allSatisfy(roots.contains))
        let ec = try #require(roots.first { P384.Signing.PublicKey($0.publicKey) != nil })
        #expect(ec.subject.description.contains("Key Attestation CA1"))
        var serializer = DER.Serializer()
        try serializer.serialize(ec)
        let fingerprint = SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(fingerprint == "6D:9D:B4:CE:6C:5C:0B:29:31:66:D0:89:86:E0:57:74:A8:77:6C:EB:52:5D:9E:43:29:52:0D:E1:2B:A4:BC:C0")
    }

    @Test func aRealTEEChainVerifiesAtItsTimeWithItsChallenge() throws {
        let chain = try AndroidVectors.chain("ec-tee-chain.pem")
        #expect(chain.count == 4)
        let verified = try AndroidKeyAttestationVerifier(policy: Self.unlockedAllowed)
            .verify(chain: chain, challenge: Array("abc".utf8), now: AndroidVectors.teeTime, status: nil)
        let description = verified.description
        #expect(description.attestationVersion == 3 && description.keymasterVersion == 4)
        #expect(description.attestationSecurityLevel == .trustedEnvironment && verified.securityLevel == .trustedEnvironment)
        #expect(description.attestationChallenge == Array("abc".utf8))
        let root = try #require(description.hardwareEnforced.rootOfTrust)
        #expect(!root.deviceLocked && root.verifiedBootState == .unverified && root.verifiedBootKey == [UInt8](repeating: 0, count: 32))
        #expect(description.hardwareEnforced.osPatchLevel == 201907 && description.hardwareEnforced.algorithm == 3 || description.hardwareEnforced.algorithm == 4)
        #expect(verified.packageNames.contains("com.android.keychain"))
        #expect(P256.Signing.PublicKey(try Certificate(derEncoded: chain[0]).publicKey) != nil)
        // The batch certificate is the one above the attested key.
        #expect(verified.batchCertificate == (try Certificate(derEncoded: chain[1])))
    }

    @Test func theDefaultPolicyRefusesAnUnlockedDevice() throws {
        let chain = try AndroidVectors.chain("ec-tee-chain.pem")
        let code = Self.refusal {
            _ = try AndroidKeyAttestationVerifier(policy: AndroidAttestationPolicy())
                .verify(chain: chain, challenge: Array("abc".utf8), now: AndroidVectors.teeTime, status: nil)
        }
        #expect(code == .attestationBootState)
        var lockedOnly = Self.unlockedAllowed
        lockedOnly.requireVerifiedBoot = true
        #expect(Self.refusal { _ = try AndroidKeyAttestationVerifier(policy: lockedOnly).verify(chain: chain, challenge: Array("abc".utf8), now: AndroidVectors.teeTime, status: nil) } == .attestationBootState)
    }

    @Test func eachWayOfBreakingTheChainHasItsOwnCode() throws {
        let chain = try AndroidVectors.chain("ec-tee-chain.pem")
        let verifier = AndroidKeyAttestationVerifier(policy: Self.unlockedAllowed)
        func check(_ chain: [[UInt8]], challenge: String = "abc", at time: Date = AndroidVectors.teeTime, status: AttestationStatusList? = nil, policy: AndroidAttestationPolicy? = nil) -> SignetError.Code? {
            Self.refusal {
                _ = try AndroidKeyAttestationVerifier(policy: policy ?? Self.unlockedAllowed)
                    .verify(chain: chain, challenge: Array(challenge.utf8), now: time, status: status)
            }
        }
        #expect(check(chain) == nil)
        // Altered: the last byte of the leaf's signature.
        var altered = chain
        altered[0][altered[0].count - 1] ^= 0x01
        #expect(check(altered) == .attestationChainInvalid)
        // Altered in the record: the challenge byte inside the signed leaf.
        var record = chain
        if let at = record[0].firstRange(of: Array("abc".utf8)) { record[0][at.lowerBound] = UInt8(ascii: "x") }
        #expect(check(record) == .attestationChainInvalid)
        // Out of order, or cut short.
        #expect(check([chain[1], chain[0], chain[2], chain[3]]) == .attestationChainInvalid)
        #expect(check([chain[0]]) == .attestationChainInvalid)
        // Re-rooted: the same chain where another root is trusted. (Google's 2016 and 2019 roots
        // share one key: either takes the chain.)
        var otherRoots = Self.unlockedAllowed
        otherRoots.roots = [try Self.selfSignedRoot()]
        #expect(check(chain, policy: otherRoots) == .attestationRootUnknown)
        // At a time outside the root's validity (it ended 2026-05-24).
        #expect(check(chain, at: Date(timeIntervalSince1970: 1_800_000_000)) == .attestationExpired)
        // Another challenge.
        #expect(check(chain, challenge: "abd") == .attestationNonceMismatch)
        #expect(check(chain, challenge: "") == .attestationNonceMismatch)
        // Revoked: an intermediate by the serial openssl prints for it (decimal), the root by hex.
        let byDecimal = try AttestationStatusList(json: Array(#"{"entries": {"13206311789638820911": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}}}"#.utf8))
        #expect(check(chain, status: byDecimal) == .attestationRevoked)
        let byHex = try AttestationStatusList(json: Array(#"{"entries": {"E8FA196314D2FA18": {"status": "SUSPENDED"}}}"#.utf8))
        #expect(check(chain, status: byHex) == .attestationRevoked)
        // Google's sample list revokes none of this chain.
        #expect(check(chain, status: try AttestationStatusList(json: AndroidVectors.bytes("attestation-status-sample.json"))) == nil)
        // A patch level older than asked, and an app that is not allowed.
        var patched = Self.unlockedAllowed
        patched.minimumOSPatchLevel = 202_401
        #expect(check(chain, policy: patched) == .attestationPatchLevel)
        patched.minimumOSPatchLevel = 201_907
        #expect(check(chain, policy: patched) == nil)
        var app = Self.unlockedAllowed
        app.packageNames = ["com.example.bank"]
        #expect(check(chain, policy: app) == .appIDMismatch)
        app.packageNames = ["com.android.keychain"]
        #expect(check(chain, policy: app) == nil)
        app.signingDigests = [[UInt8](repeating: 1, count: 32)]
        #expect(check(chain, policy: app) == .appIDMismatch)
        // StrongBox asked of a TEE key.
        var strongBox = Self.unlockedAllowed
        strongBox.minimumSecurityLevel = .strongBox
        #expect(check(chain, policy: strongBox) == .attestationSecurityLevel)
        _ = verifier
    }

    /// KeyMint 200's app-provided attestation keys: the app's key attested under its own
    /// attestation key, itself attested by the TEE under Google's remotely provisioned CAs.
    @Test func aChainWithAnAppProvidedAttestationKeyVerifies() throws {
        let chain = try AndroidVectors.chain("attest-key-chain.pem")
        #expect(chain.count == 7)
        let inspection = AndroidKeyAttestationVerifier(policy: Self.unlockedAllowed)
            .inspect(chain: chain, challenge: Array("challenge".utf8), now: AndroidVectors.attestKeyTime, status: nil)
        #expect(inspection.passed, "\(inspection.steps.map { "\($0.name): \($0.error.map(String.init(describing:)) ?? "ok")" })")
        #expect(inspection.attestedIndex == 0)
        #expect(inspection.description?.attestationVersion == 200 && inspection.description?.keymasterVersion == 200)
        #expect(inspection.verified?.packageNames == ["com.google.attestationexample"])
        // Signed by the 2019 Google root.
        #expect(try Certificate(derEncoded: chain[6]) == GoogleAttestationRoots.certificates[1])
        // Leaked keys are counted under the attestation keys and the device's TEE key, never under
        // Google's remote provisioning CAs (Droid CA3, CA2), which vouch for every such device.
        let counted = try #require(inspection.verified?.issuers)
        #expect(counted == (try [1, 2, 3].map { try Certificate(derEncoded: chain[$0]) }))
    }

    static func selfSignedRoot() throws -> Certificate {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Not Google") }
        return try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(key.publicKey),
            notValidBefore: Date(timeIntervalSince1970: 0),
            notValidAfter: Date(timeIntervalSince1970: 4_000_000_000),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
            issuerPrivateKey: .init(key)
        )
    }

    /// The status list reads serials in hex and in decimal, and a serial past 64 bits.
    @Test func statusListSerials() throws {
        #expect(AttestationStatusList.decimal([0xB7, 0x46, 0x3E, 0x9A, 0x46, 0x79, 0xA4, 0x2F]) == "13206311789638820911")
        #expect(AttestationStatusList.decimal([0x00, 0x01, 0x00]) == "256" && AttestationStatusList.decimal([0]) == "0")
        #expect(AttestationStatusList.hex([0x00, 0x0A, 0xFF]) == "aff")
        #expect(throws: SignetError.self) { try AttestationStatusList(json: Array("[]".utf8)) }
    }
}
