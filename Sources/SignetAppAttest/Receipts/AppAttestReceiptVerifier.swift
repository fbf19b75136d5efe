// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies App Attest receipts (Apple, "Assessing fraud risk"): the CMS signature, the signer's chain
/// to a pinned root at a given time, and the payload's binding to the app and the attested key.
public struct AppAttestReceiptVerifier: Sendable {
    /// What the receipt must name; a nil field is not checked.
    public struct Expectation: Sendable {
        public var appIDs: Set<String>?
        /// The attested key's 65-byte X9.63 point.
        public var publicKey: [UInt8]?
        /// Field 4 of an ATTEST receipt: the attestation's client data hash.
        public var clientHash: [UInt8]?
        /// A receipt just received from Apple must be this fresh (Apple says five minutes).
        public var maximumAge: TimeInterval?

        public init(
            appIDs: Set<String>? = nil,
            publicKey: [UInt8]? = nil,
            clientHash: [UInt8]? = nil,
            maximumAge: TimeInterval? = nil
        ) {
            self.appIDs = appIDs
            self.publicKey = publicKey
            self.clientHash = clientHash
            self.maximumAge = maximumAge
        }
    }

    /// Marks Apple's "Application Attestation Fraud Receipt Signing" certificates. Apple Root CA - G3
    /// anchors many other certificates (any developer can obtain some), so the chain alone does not
    /// make a signer a receipt signer.
    public static let receiptSigningExtension: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 12, 15]
    /// How far a receipt's creation time may lie ahead of the verifying clock.
    public static let clockSkew: TimeInterval = 300

    public let roots: [Certificate]

    /// - Parameter roots: trusted roots; Apple Root CA - G3 when nil.
    public init(roots: [Certificate]? = nil) throws {
        self.roots = try roots ?? [Certificate(pemEncoded: AppleRootCAG3.pem)]
    }

    public init(trusting roots: [Certificate]) {
        self.roots = roots
    }

    /// Verifies `receipt` at `time` and returns its fields.
    ///
    /// - Throws: `receipt_invalid` (structure, signature), `receipt_chain_invalid`, `app_id_mismatch`,
    ///   `attestation_key_mismatch`, `receipt_expired`, `receipt_not_yet_valid` (created after `time`),
    ///   `receipt_stale` (older than `maximumAge`).
    public func verify(_ receipt: [UInt8], at time: Date, expecting expectation: Expectation = .init()) async throws
        -> AppAttestReceipt
    {
        let signed = try CMSSignedData(berEncoded: receipt)
        let signer = try Self.signerCertificate(of: signed)
        try Self.checkSignature(signed, by: signer)
        try await checkChain(signer: signer, certificates: signed.certificates, at: time)
        let fields = try AppAttestReceipt(payload: signed.content, bytes: receipt)
        try Self.check(fields, at: time, expecting: expectation)
        return fields
    }

    private static func signerCertificate(of signed: CMSSignedData) throws -> Certificate {
        guard
            let certificate = signed.certificates.first(where: {
                $0.issuer == signed.signer.issuer && $0.serialNumber.bytes == signed.signer.serialNumber
            })
        else { throw SignetError(.receiptChainInvalid, "the receipt does not carry its signer's certificate") }
        return certificate
    }

    /// ECDSA P-256 over the content, or, with signed attributes, over their DER whose `messageDigest`
    /// is the content's SHA-256 (RFC 5652). Apple signed some 2020 receipts over the content although
    /// they carry signed attributes; either way the signature binds the content.
    private static func checkSignature(_ signed: CMSSignedData, by certificate: Certificate) throws {
        guard let key = P256.Signing.PublicKey(certificate.publicKey) else {
            throw SignetError(.receiptInvalid, "the receipt signer's key is not P-256")
        }
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signed.signer.signature) else {
            throw SignetError(.receiptInvalid, "the receipt signature is not a DER ECDSA signature")
        }
        if key.isValidSignature(signature, for: signed.content) { return }
        if let attributes = signed.signer.signedAttributes, let digest = signed.signer.messageDigest,
            ConstantTime.equals(digest, Array(SHA256.hash(data: signed.content))),
            key.isValidSignature(signature, for: attributes)
        {
            return
        }
        throw SignetError(.receiptInvalid, "the receipt signature does not verify")
    }

    private func checkChain(signer: Certificate, certificates: [Certificate], at time: Date) async throws {
        guard signer.extensions[oid: Self.receiptSigningExtension] != nil else {
            throw SignetError(.receiptChainInvalid, "the receipt's signer is not a receipt-signing certificate")
        }
        let intermediates = certificates.filter { $0 != signer }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
        }
        guard case .validCertificate = await verifier.validate(leaf: signer, intermediates: CertificateStore(intermediates))
        else {
            throw SignetError(.receiptChainInvalid, "the receipt's signer does not chain to the pinned root at \(time)")
        }
    }

    private static func check(_ receipt: AppAttestReceipt, at time: Date, expecting expectation: Expectation) throws {
        if let appIDs = expectation.appIDs, !appIDs.contains(receipt.appID) {
            throw SignetError(.appIDMismatch, "the receipt is for \(receipt.appID)")
        }
        if let expected = expectation.publicKey {
            guard let certificate = try? Certificate(derEncoded: receipt.attestedCertificate),
                let key = P256.Signing.PublicKey(certificate.publicKey),
                ConstantTime.equals(Array(key.x963Representation), expected)
            else { throw SignetError(.attestationKeyMismatch, "the receipt is for another key") }
        }
        if let expected = expectation.clientHash, !ConstantTime.equals(expected, receipt.clientHash) {
            throw SignetError(.attestationKeyMismatch, "the receipt is for another attestation (client hash)")
        }
        if receipt.createdAt > time.addingTimeInterval(clockSkew) {
            throw SignetError(.receiptNotYetValid, "the receipt was created at \(receipt.createdAt), after \(time)")
        }
        if let maximumAge = expectation.maximumAge, receipt.createdAt < time.addingTimeInterval(-maximumAge) {
            throw SignetError(.receiptStale, "the receipt was created at \(receipt.createdAt), too long before \(time)")
        }
        if time > receipt.expiresAt {
            throw SignetError(.receiptExpired, "the receipt expired at \(receipt.expiresAt)")
        }
    }
}
