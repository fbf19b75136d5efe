// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
import X509

/// A certificate and the key that issues under it: the gateway's development TLS CA and the device
/// CA are both one of these.
public struct CertificateIssuer: Sendable {
    public enum Usage: Sendable {
        case server, client
    }

    public let certificate: Certificate
    public let privateKey: Certificate.PrivateKey

    public init(certificate: Certificate, privateKey: Certificate.PrivateKey) {
        self.certificate = certificate
        self.privateKey = privateKey
    }

    /// A new self-signed CA with a P-256 key.
    public static func selfSignedCA(
        commonName: String,
        key: P256.Signing.PrivateKey = .init(),
        notBefore: Date = Date().addingTimeInterval(-3600),
        notAfter: Date = Date().addingTimeInterval(10 * 365 * 86_400)
    ) throws -> CertificateIssuer {
        let name = try DistinguishedName {
            CommonName(commonName)
            OrganizationName("Signet")
        }
        let privateKey = Certificate.PrivateKey(key)
        let certificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: privateKey.publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: privateKey.publicKey)
            },
            issuerPrivateKey: privateKey
        )
        return CertificateIssuer(certificate: certificate, privateKey: privateKey)
    }

    /// Loads a CA certificate and its private key (PEM files).
    public static func load(certificateFile: String, keyFile: String) throws -> CertificateIssuer {
        guard let certificateText = FileManager.default.contents(atPath: certificateFile),
            let keyText = FileManager.default.contents(atPath: keyFile)
        else { throw SignetError(.invalidKey, "cannot read \(certificateFile) and \(keyFile)") }
        do {
            let certificate = try Certificate(pemEncoded: String(decoding: certificateText, as: UTF8.self))
            let key = try Certificate.PrivateKey(pemEncoded: String(decoding: keyText, as: UTF8.self))
            guard key.publicKey == certificate.publicKey else {
                throw SignetError(.invalidKey, "\(keyFile) is not the key of \(certificateFile)")
            }
            return CertificateIssuer(certificate: certificate, privateKey: key)
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.invalidKey, "cannot load the CA from \(certificateFile): \(error)")
        }
    }

    /// Issues a leaf certificate for `publicKey`.
    ///
    /// - Parameters:
    ///   - hosts: DNS names and IP literals for a server certificate's subjectAltName.
    ///   - uris: URIs for the subjectAltName (a device certificate names `signet:device:<id>`).
    ///   - publicKey: The subject's key.
    ///   - commonName: The subject's common name.
    ///   - serialNumber: Unique per issuer.
    ///   - notBefore: Start of validity.
    ///   - notAfter: End of validity.
    ///   - usage: Server (TLS server authentication) or client (TLS client authentication).
    public func issue(
        commonName: String,
        publicKey: Certificate.PublicKey,
        usage: Usage,
        hosts: [String] = [],
        uris: [String] = [],
        serialNumber: Certificate.SerialNumber = .init(),
        notBefore: Date = Date().addingTimeInterval(-300),
        notAfter: Date
    ) throws -> Certificate {
        var names: [GeneralName] = []
        for host in hosts {
            if let address = Self.ipAddressBytes(host) {
                names.append(.ipAddress(ASN1OctetString(contentBytes: address[...])))
            } else {
                names.append(.dnsName(host))
            }
        }
        names += uris.map { GeneralName.uniformResourceIdentifier($0) }
        let sans = names
        return try Certificate(
            version: .v3,
            serialNumber: serialNumber,
            publicKey: publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: certificate.subject,
            subject: try DistinguishedName { CommonName(commonName) },
            signatureAlgorithm: signatureAlgorithm,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([usage == .server ? .serverAuth : .clientAuth])
                if !sans.isEmpty { SubjectAlternativeNames(sans) }
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: privateKey.publicKey).keyIdentifier)
            },
            issuerPrivateKey: privateKey
        )
    }

    /// The signature algorithm for the issuer's key type.
    var signatureAlgorithm: Certificate.SignatureAlgorithm {
        let key = privateKey.publicKey
        if P384.Signing.PublicKey(key) != nil { return .ecdsaWithSHA384 }
        if Curve25519.Signing.PublicKey(key) != nil { return .ed25519 }
        if P256.Signing.PublicKey(key) != nil { return .ecdsaWithSHA256 }
        return .sha256WithRSAEncryption
    }

    public var certificatePEM: String {
        get throws { try certificate.serializeAsPEM().pemString }
    }

    public var privateKeyPEM: String {
        get throws { try privateKey.serializeAsPEM().pemString }
    }

    /// IPv4 dotted quads only (loopback and LAN development); IPv6 hosts use DNS names.
    static func ipAddressBytes(_ host: String) -> [UInt8]? {
        let parts = host.split(separator: ".")
        guard parts.count == 4 else { return nil }
        let bytes = parts.compactMap { UInt8($0) }
        return bytes.count == 4 ? bytes : nil
    }
}
