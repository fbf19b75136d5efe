// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies attestation objects with Apple's steps (Validating apps that connect to your server).
public struct AppAttestAttestationVerifier: Sendable {
    public let policy: AppAttestPolicy
    /// Intermediates already chained to a trusted root: every attestation carries the same one, so
    /// its P-384 signature is checked once, not per attestation.
    private let intermediates = IntermediateCache()

    static let nonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]
    static let productionAAGUID = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
    static let developmentAAGUID = Array("appattestdevelop".utf8)

    public init(policy: AppAttestPolicy) {
        self.policy = policy
    }

    /// Verifies `attestation` (CBOR) for `keyID` (standard base64) and `challenge` at `time`.
    ///
    /// - Throws: the first failed step's `SignetError` (see ``inspect(attestation:keyID:challenge:at:)``).
    public func verify(attestation: [UInt8], keyID: String, challenge: [UInt8], at time: Date) async throws
        -> VerifiedAttestation
    {
        let inspection = await inspect(attestation: attestation, keyID: keyID, challenge: challenge, at: time)
        if let verified = inspection.verified { return verified }
        throw inspection.steps.compactMap(\.error).first ?? SignetError(.attestationChainInvalid, "not verified")
    }

    /// Runs every step it can and reports each, for diagnosis (`signet inspect attestation`).
    public func inspect(attestation: [UInt8], keyID: String, challenge: [UInt8], at time: Date) async
        -> AttestationInspection
    {
        var report = AttestationInspection()
        func step(_ name: String, _ body: () throws -> Void) {
            report.steps.append(.run(name, refusing: .malformedCBOR, body))
        }

        var object = CBORValue.null
        var authDataBytes: [UInt8] = []
        var chain: [CBORValue] = []
        step("decode the attestation object") {
            object = try CBORDecoder().decode(attestation)
            guard object[text: "fmt"] == .text("apple-appattest"), let statement = object[text: "attStmt"],
                let bytes = object[text: "authData"]?.bytes, case .array(let x5c)? = statement[text: "x5c"],
                (2...4).contains(x5c.count),
                let receipt = statement[text: "receipt"]?.bytes
            else { throw SignetError(.malformedCBOR, "not an apple-appattest attestation object") }
            authDataBytes = bytes
            chain = x5c
            report.receipt = receipt
        }
        step("parse the certificates") {
            report.certificates = try chain.map { value in
                guard let der = value.bytes else { throw SignetError(.malformedCBOR, "x5c holds a non-byte-string") }
                do {
                    return try Certificate(derEncoded: der)
                } catch {
                    throw SignetError(.attestationChainInvalid, "a certificate in x5c does not parse: \(error)")
                }
            }
        }
        guard report.passed, let leaf = report.certificates.first else { return report }

        // Step 1: the chain ends at the pinned root and every certificate is valid at `time`.
        let chainValid = await validateChain(report.certificates, at: time)
        step("1. chain to the trusted root, valid at \(time)") {
            guard chainValid else {
                throw SignetError(
                    .attestationChainInvalid,
                    "the certificate chain does not lead to the App Attest root at \(time)"
                )
            }
        }
        // Steps 2-4: the leaf's nonce extension is SHA256(authData ‖ clientDataHash).
        step("2-4. nonce = SHA256(authData ‖ clientDataHash)") {
            let clientDataHash =
                policy.clientDataHash == .rawChallenge ? challenge : Array(SHA256.hash(data: challenge))
            let expectedNonce = Array(SHA256.hash(data: authDataBytes + clientDataHash))
            guard let nonce = try Self.nonce(in: leaf), ConstantTime.equals(nonce, expectedNonce) else {
                throw SignetError(.attestationNonceMismatch, "the certificate's nonce does not match this challenge")
            }
        }
        // Step 5: keyId is SHA256 of the leaf's public point.
        var point: [UInt8] = []
        var computedKeyID: [UInt8] = []
        step("5. keyId = SHA256(public key)") {
            guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
                throw SignetError(.attestationChainInvalid, "the leaf key is not P-256")
            }
            point = Array(leafKey.x963Representation)
            computedKeyID = Array(SHA256.hash(data: point))
            guard let given = Base64.decode(keyID) ?? Base64.urlDecode(keyID), ConstantTime.equals(given, computedKeyID)
            else {
                throw SignetError(.attestationKeyMismatch, "keyId is not the hash of the attested key")
            }
        }
        // Steps 6-9: rpIdHash, counter, environment, credential id, and the COSE key itself.
        var authData: AuthenticatorData?
        step("parse authenticator data") { authData = try AuthenticatorData(authDataBytes) }
        report.authenticatorData = authData
        guard let authData else { return report }
        var appID: String?
        step("6. rpIdHash = SHA256(App ID)") {
            appID = policy.appIDs.sorted().first {
                ConstantTime.equals(Array(SHA256.hash(data: Array($0.utf8))), authData.rpIDHash)
            }
            guard appID != nil else { throw SignetError(.appIDMismatch, "the attestation is for another App ID") }
        }
        step("7. counter = 0") {
            guard authData.signCount == 0 else {
                throw SignetError(.counterNotIncreasing, "an attestation's counter must be 0")
            }
        }
        var environment: AppAttestPolicy.Environment?
        step("8. environment (aaguid)") {
            switch authData.aaguid {
            case Self.productionAAGUID?: environment = .production
            case Self.developmentAAGUID?: environment = .development
            default: throw SignetError(.environmentMismatch, "unknown App Attest AAGUID")
            }
            guard environment == .production || policy.allowDevelopment else {
                throw SignetError(.environmentMismatch, "development keys are not accepted")
            }
        }
        report.environment = environment
        step("9. credentialId = keyId, COSE key = certificate key") {
            guard authData.credentialID == computedKeyID else {
                throw SignetError(.attestationKeyMismatch, "the credential id is not the key id")
            }
            guard let cose = authData.credentialPublicKey, try COSEKey.p256Point(cose) == point else {
                throw SignetError(.attestationKeyMismatch, "the COSE key is not the certificate's key")
            }
        }
        // Step 10 (Apple's fraud-risk article): the receipt is Apple's, for this app, key and attestation.
        if report.passed {
            var receiptError: SignetError?
            do {
                report.verifiedReceipt = try await AppAttestReceiptVerifier(trusting: policy.receiptRoots).verify(
                    report.receipt,
                    at: time,
                    expecting: .init(
                        appIDs: appID.map { [$0] },
                        publicKey: point,
                        clientHash: policy.clientDataHash == .rawChallenge ? challenge : Array(SHA256.hash(data: challenge))
                    )
                )
            } catch let error as SignetError {
                receiptError = error
            } catch {
                receiptError = SignetError(.receiptInvalid, "\(error)")
            }
            step("10. receipt signed by Apple for this app, key and challenge") {
                if let receiptError { throw receiptError }
            }
        }
        // Step 11 (iOS 27): the app build the device signed in is one the policy accepts.
        if report.passed, let appBuild = policy.appBuild {
            step("11. app build: \(Self.describe(authData.appBuild))") { try appBuild.check(authData.appBuild) }
        }
        if report.passed, let appID, let environment, let key = try? VerificationKey(p256X963: point),
            let receipt = report.verifiedReceipt
        {
            report.verified = VerifiedAttestation(
                keyID: Base64.encode(computedKeyID),
                publicKey: key,
                environment: environment,
                appID: appID,
                receipt: receipt,
                leafNotAfter: leaf.notValidAfter,
                osVersion: Self.osVersion(in: leaf),
                appBuild: authData.appBuild
            )
        }
        return report
    }

    /// Validates leaf ← intermediate ← root at `time`. An intermediate seen valid before (under the
    /// same roots, inside its validity) stands in as the anchor, so only the leaf's signature is checked.
    private func validateChain(_ certificates: [Certificate], at time: Date) async -> Bool {
        let leaf = certificates[0]
        let rest = Array(certificates.dropFirst())
        if rest.count == 1, let intermediate = rest.first, intermediate.notValidBefore <= time,
            time <= intermediate.notValidAfter, intermediates.contains(intermediate)
        {
            var verifier = Verifier(rootCertificates: CertificateStore([intermediate])) {
                RFC5280Policy(fixedExpiryValidationTime: time)
            }
            if case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore()) {
                return true
            }
        }
        var verifier = Verifier(rootCertificates: CertificateStore(policy.roots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
        }
        guard case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore(rest)) else {
            return false
        }
        if rest.count == 1, let intermediate = rest.first { intermediates.insert(intermediate) }
        return true
    }

    /// `app-store 42`, or `undeclared`.
    static func describe(_ build: AppBuild) -> String {
        build.isUndeclared
            ? "undeclared" : "\(build.category?.name ?? "no category") \(build.bundleVersion ?? "no version")"
    }

    static let osVersionExtension: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 7]

    /// `SEQUENCE { [1400] EXPLICIT OCTET STRING("14.4") }`; informational, so `nil` when absent or odd.
    static func osVersion(in certificate: Certificate) -> String? {
        guard let value = certificate.extensions[oid: osVersionExtension]?.value,
            let root = try? DER.parse(Array(value)), case .constructed(let nodes) = root.content
        else { return nil }
        for node in nodes where node.identifier == ASN1Identifier(tagWithNumber: 1400, tagClass: .contextSpecific) {
            guard case .constructed(let inner) = node.content, let octets = inner.first(where: { _ in true }),
                let string = try? ASN1OctetString(derEncoded: octets)
            else { return nil }
            return String(strictUTF8: Array(string.bytes))
        }
        return nil
    }

    /// The 32 bytes of the nonce extension: `SEQUENCE { [1] EXPLICIT OCTET STRING }`, parsed strictly.
    static func nonce(in certificate: Certificate) throws -> [UInt8]? {
        guard let extensionValue = certificate.extensions[oid: nonceExtension]?.value else { return nil }
        return try nonce(extensionValue: Array(extensionValue))
    }

    static func nonce(extensionValue: [UInt8]) throws -> [UInt8] {
        do {
            let root = try DER.parse(extensionValue)
            return try DER.sequence(root, identifier: .sequence) { nodes in
                guard let tagged = nodes.next() else {
                    throw SignetError(.attestationNonceMismatch, "empty nonce extension")
                }
                return try DER.explicitlyTagged(tagged, tagNumber: 1, tagClass: .contextSpecific) { node in
                    let octets = try ASN1OctetString(derEncoded: node)
                    guard octets.bytes.count == 32 else {
                        throw SignetError(.attestationNonceMismatch, "the nonce is not 32 bytes")
                    }
                    return Array(octets.bytes)
                }
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.attestationNonceMismatch, "the nonce extension does not parse: \(error)")
        }
    }
}
