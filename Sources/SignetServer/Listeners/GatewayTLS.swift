// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HummingbirdTLS
import NIOCore
import NIOSSL
import SignetCore
import SwiftASN1
import X509

/// The certificate and key the gateway serves, resolved from the configuration at start.
public struct GatewayTLS: Sendable {
    /// The served chain, leaf first.
    public let chain: [Certificate]
    public let chainPEM: String
    let keyPEM: String

    /// Reads the configured files, or makes a development CA and certificate (written to the files
    /// when paths are given and the files do not exist yet).
    public static func resolve(_ tls: GatewayConfiguration.TLS, now: Date = Date()) throws -> GatewayTLS {
        let files = FileManager.default
        let paths = tls.certificateFile.flatMap { certificate in tls.keyFile.map { (certificate, $0) } }
        let absent = paths.map { !files.fileExists(atPath: $0.0) && !files.fileExists(atPath: $0.1) } ?? true
        if tls.development == true && absent {
            let development = try makeDevelopment(hosts: tls.developmentHosts ?? ["localhost", "127.0.0.1"], now: now)
            if let (certificateFile, keyFile) = paths {
                guard
                    files.createFile(atPath: keyFile, contents: Data(development.keyPEM.utf8), attributes: [.posixPermissions: 0o600]),
                    files.createFile(atPath: certificateFile, contents: Data(development.chainPEM.utf8))
                else { throw ConfigurationError(.file, at: "", "cannot write the development certificate to \(certificateFile)") }
            }
            return development
        }
        // GatewayConfiguration.validate() requires both files unless `development` is set.
        guard let (certificateFile, keyFile) = paths, let chainData = files.contents(atPath: certificateFile),
            let keyData = files.contents(atPath: keyFile)
        else { throw ConfigurationError(.file, at: "", "cannot read tls.certificateFile and tls.keyFile") }
        let chainPEM = String(decoding: chainData, as: UTF8.self)
        guard let chain = try? PEMCertificates.parse(chainPEM), !chain.isEmpty else {
            throw ConfigurationError(.file, at: "", "\(certificateFile) holds no PEM certificate")
        }
        return GatewayTLS(chain: chain, chainPEM: chainPEM, keyPEM: String(decoding: keyData, as: UTF8.self))
    }

    /// A development CA and a 90-day server certificate under it for `hosts`.
    public static func makeDevelopment(hosts: [String], now: Date = Date()) throws -> GatewayTLS {
        let ca = try CertificateIssuer.selfSignedCA(
            commonName: "Signet Development CA",
            notBefore: now.addingTimeInterval(-3600),
            notAfter: now.addingTimeInterval(365 * 86_400)
        )
        let key = P256.Signing.PrivateKey()
        let leaf = try ca.issue(
            commonName: hosts.first ?? "localhost",
            publicKey: Certificate.PublicKey(key.publicKey),
            usage: .server,
            hosts: hosts,
            notBefore: now.addingTimeInterval(-3600),
            notAfter: now.addingTimeInterval(90 * 86_400)
        )
        let chainPEM = try leaf.serializeAsPEM().pemString + "\n" + ca.certificate.serializeAsPEM().pemString + "\n"
        return GatewayTLS(chain: [leaf, ca.certificate], chainPEM: chainPEM, keyPEM: key.pemRepresentation)
    }

    /// `sha256/<base64>  <subject>` per certificate, leaf first — what `signet pin --host` prints.
    public var pinLines: [String] {
        chain.map { certificate in
            let pin = (try? SPKIPin(certificateDER: certificate.serializeAsPEM().derBytes))?.description ?? "?"
            return "\(pin)  \(certificate.subject)"
        }
    }

    /// The HummingbirdTLS configuration; with client certificates, any presented certificate passes
    /// the handshake and the route check decides (so a refusal carries a reason code, not a TLS alert).
    public func channelConfiguration(clientCertificates: Bool) throws -> TLSChannelConfiguration {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(chainPEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem))
        )
        tls.minimumTLSVersion = .tlsv12
        guard clientCertificates else { return TLSChannelConfiguration(tlsConfiguration: tls) }
        tls.certificateVerification = .optionalVerification
        // The handshake still proves the client holds the certificate's key (CertificateVerify);
        // whether the certificate is one of ours is decided per route, with a reason code.
        return TLSChannelConfiguration(tlsConfiguration: tls) { _, promise in
            promise.succeed(.certificateVerified)
        }
    }
}
