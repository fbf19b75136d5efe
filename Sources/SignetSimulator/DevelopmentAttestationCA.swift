// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
import X509

/// A software stand-in for Apple's App Attestation CA: a root and an intermediate that issue leaf
/// certificates carrying the nonce extension (1.2.840.113635.100.8.2), in Apple's layout.
///
/// - Important: A server trusts this root only when configured to (tests, `signet demo`); never by
///   default.
public struct DevelopmentAttestationCA: Sendable {
    public let root: Certificate
    public let intermediate: Certificate
    /// Signs receipts under the same root (a server trusting this root for attestations trusts it for
    /// receipts too).
    public let receiptSigner: DevelopmentReceiptSigner
    private let rootKey: P384.Signing.PrivateKey
    private let intermediateKey: P384.Signing.PrivateKey

    /// - Parameters:
    ///   - now: The start of the certificates' validity (a day before, for clock skew).
    ///   - receiptSigningExtension: false makes a receipt signer without Apple's marker extension,
    ///     which verifiers must refuse.
    public init(now: Date = Date(), receiptSigningExtension: Bool = true) throws {
        try self.init(
            rootKey: P384.Signing.PrivateKey(),
            intermediateKey: P384.Signing.PrivateKey(),
            now: now,
            receiptSigningExtension: receiptSigningExtension
        )
    }

    /// The CA kept as ``bundlePEM``: the same root, so a gateway that trusts it (its
    /// `appAttest.trustedRootsFile`) keeps trusting what an app's debug build attests with it.
    ///
    /// - Throws: `invalid_key` for a text that is not such a bundle.
    public init(bundlePEM: String, now: Date = Date()) throws {
        let documents = try PEMDocument.parseMultiple(pemString: bundlePEM)
        let keys = try documents.filter { $0.discriminator == "PRIVATE KEY" }.map {
            try P384.Signing.PrivateKey(derRepresentation: $0.derBytes)
        }
        guard keys.count == 2 else {
            throw SignetError(.invalidKey, "a development attestation CA bundle holds two P-384 keys, root first")
        }
        try self.init(rootKey: keys[0], intermediateKey: keys[1], now: now, receiptSigningExtension: true)
    }

    /// The CA's two keys (PKCS#8 PEM, root first): what ``init(bundlePEM:now:)`` reads. Keep it with
    /// the app's debug builds only; the gateway needs ``rootPEM`` alone.
    public var bundlePEM: String {
        rootKey.pemRepresentation + "\n" + intermediateKey.pemRepresentation + "\n"
    }

    private init(
        rootKey: P384.Signing.PrivateKey,
        intermediateKey: P384.Signing.PrivateKey,
        now: Date,
        receiptSigningExtension: Bool
    ) throws {
        self.rootKey = rootKey
        self.intermediateKey = intermediateKey
        let rootName = try DistinguishedName {
            CommonName("Signet Simulator App Attestation Root CA")
            OrganizationName("Signet")
        }
        let intermediateName = try DistinguishedName {
            CommonName("Signet Simulator App Attestation CA 1")
            OrganizationName("Signet")
        }
        root = try DevelopmentCertificate.authority(
            subject: rootName,
            issuer: rootName,
            publicKey: .init(rootKey.publicKey),
            issuerKey: .init(rootKey),
            signatureAlgorithm: .ecdsaWithSHA384,
            now: now,
            years: 20
        )
        intermediate = try DevelopmentCertificate.authority(
            subject: intermediateName,
            issuer: rootName,
            publicKey: .init(intermediateKey.publicKey),
            issuerKey: .init(rootKey),
            signatureAlgorithm: .ecdsaWithSHA384,
            now: now,
            years: 10,
            maxPathLength: 0
        )
        receiptSigner = try DevelopmentReceiptSigner(
            rootName: rootName,
            rootKey: rootKey,
            now: now,
            receiptSigningExtension: receiptSigningExtension
        )
    }

    /// The root as PEM, for a server's `trustedRoots` in development.
    public var rootPEM: String {
        get throws { try root.serializeAsPEM().pemString }
    }

    /// A leaf for `publicKey` whose nonce extension holds `nonce`; like Apple's, it lives 3 days.
    public func issueLeaf(publicKey: P256.Signing.PublicKey, nonce: [UInt8], now: Date) throws -> Certificate {
        // extnValue = SEQUENCE { [1] EXPLICIT OCTET STRING(nonce) }
        let nonceValue: [UInt8] =
            [0x30, UInt8(nonce.count + 4), 0xA1, UInt8(nonce.count + 2), 0x04, UInt8(nonce.count)] + nonce
        let subject = try DistinguishedName {
            CommonName(
                Array(SHA256.hash(data: Array(publicKey.x963Representation))).map { String(format: "%02x", $0) }
                    .joined()
            )
            OrganizationName("Signet Simulator")
        }
        return try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(publicKey),
            notValidBefore: now.addingTimeInterval(-60),
            notValidAfter: now.addingTimeInterval(3 * 86_400),
            issuer: intermediate.subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(
                    oid: [1, 2, 840, 113_635, 100, 8, 2],
                    critical: false,
                    value: ArraySlice(nonceValue)
                )
            },
            issuerPrivateKey: .init(intermediateKey)
        )
    }
}
