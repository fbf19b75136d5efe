// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
import X509

/// A software stand-in for Google's key attestation hierarchy: a root, and per-batch intermediates
/// that sign devices' attestation certificates, as the keyboxes of one production batch share a key.
///
/// - Important: A server trusts this root only when configured to (`androidAttestation.rootsFile`
///   in tests and `signet demo`); never by default.
public struct DevelopmentAndroidAttestationCA: Sendable {
    /// One batch's attestation key and certificate: what a leaked keybox would give away.
    public struct Batch: Sendable {
        public let certificate: Certificate
        let key: P256.Signing.PrivateKey
        /// The batches above this one, nearest first (empty for a batch the root signed).
        public let parents: [Certificate]

        /// This batch's certificate and its parents': what a chain holds between leaf and root.
        public var certificates: [Certificate] { [certificate] + parents }
    }

    public let root: Certificate
    /// The batch devices are made in unless given another (``issueBatch(under:now:)``).
    public let batch: Batch
    private let rootKey: P256.Signing.PrivateKey

    public init(now: Date = Date()) throws {
        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CommonName("Signet Simulator Android Attestation Root")
            OrganizationName("Signet")
        }
        self.rootKey = rootKey
        self.root = try DevelopmentCertificate.authority(
            subject: rootName,
            issuer: rootName,
            publicKey: .init(rootKey.publicKey),
            issuerKey: .init(rootKey),
            signatureAlgorithm: .ecdsaWithSHA256,
            now: now,
            years: 20
        )
        self.batch = try Self.batch(rootName: rootName, rootKey: rootKey, now: now)
    }

    /// Another batch under the same root or, with `parent`, an intermediate the parent batch's key
    /// signs: what a holder of a leaked batch key can make as often as they like.
    public func issueBatch(under parent: Batch? = nil, now: Date = Date()) throws -> Batch {
        guard let parent else { return try Self.batch(rootName: root.subject, rootKey: rootKey, now: now) }
        let issued = try Self.batch(rootName: parent.certificate.subject, rootKey: parent.key, now: now)
        return Batch(certificate: issued.certificate, key: issued.key, parents: parent.certificates)
    }

    private static func batch(rootName: DistinguishedName, rootKey: P256.Signing.PrivateKey, now: Date) throws -> Batch {
        let key = P256.Signing.PrivateKey()
        // Google names batch keys by a serial of their own; a random one stands in for it.
        let name = try DistinguishedName {
            CommonName("Signet Simulator Android Batch \(Nonce.random())")
            OrganizationName("Signet")
        }
        let certificate = try DevelopmentCertificate.authority(
            subject: name,
            issuer: rootName,
            publicKey: .init(key.publicKey),
            issuerKey: .init(rootKey),
            signatureAlgorithm: .ecdsaWithSHA256,
            now: now,
            years: 10
        )
        return Batch(certificate: certificate, key: key, parents: [])
    }

    /// The root as PEM, for a gateway's `androidAttestation.rootsFile` in development.
    public var rootPEM: String {
        get throws { try root.serializeAsPEM().pemString }
    }
}
