// SPDX-License-Identifier: Apache-2.0
import Foundation
import X509

/// The CA certificates of the development CAs (App Attest's and Android's): valid from a day before
/// `now` (for clock skew), for `years`, able to sign certificates and nothing else.
enum DevelopmentCertificate {
    static func authority(
        subject: DistinguishedName,
        issuer: DistinguishedName,
        publicKey: Certificate.PublicKey,
        issuerKey: Certificate.PrivateKey,
        signatureAlgorithm: Certificate.SignatureAlgorithm,
        now: Date,
        years: Int,
        maxPathLength: Int? = nil
    ) throws -> Certificate {
        try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-86_400),
            notValidAfter: now.addingTimeInterval(TimeInterval(years) * 365 * 86_400),
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: signatureAlgorithm,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: maxPathLength))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: issuerKey
        )
    }
}
