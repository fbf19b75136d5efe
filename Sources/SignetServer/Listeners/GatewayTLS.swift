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
        try resolve(tls, named: "tls", now: now)
    }

    /// ``resolve(_:now:)`` for the part of the configuration at `name` (`tls`, `adminListener.tls`).
    static func resolve(_ tls: GatewayConfiguration.TLS, named name: String, now: Date = Date()) throws -> GatewayTLS {
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
        guard let (certificateFile, keyFile) = paths else {
            throw ConfigurationError(.file, at: name, "cannot read \(name).certificateFile and \(name).keyFile")
        }
        return try read(certificateFile: certificateFile, keyFile: keyFile, named: name)
    }

    /// The certificate chain and key in these files, refused unless the key is the leaf's: a
    /// mismatch is the operator's error at `serve --check` and at a reload, not a TLS library's
    /// failure at start.
    static func read(certificateFile: String, keyFile: String, named name: String) throws -> GatewayTLS {
        let files = FileManager.default
        guard let chainData = files.contents(atPath: certificateFile), let keyData = files.contents(atPath: keyFile) else {
            throw ConfigurationError(.file, at: name, "cannot read \(name).certificateFile and \(name).keyFile")
        }
        let chainPEM = String(decoding: chainData, as: UTF8.self)
        guard let chain = try? PEMCertificates.parse(chainPEM), let leaf = chain.first else {
            throw ConfigurationError(.file, at: "\(name).certificateFile", "\(certificateFile) holds no PEM certificate")
        }
        let keyPEM = String(decoding: keyData, as: UTF8.self)
        guard let key = try? Certificate.PrivateKey(pemEncoded: keyPEM) else {
            throw ConfigurationError(.file, at: "\(name).keyFile", "\(keyFile) holds no PEM private key this gateway reads (EC P-256/P-384/P-521, RSA, Ed25519)")
        }
        guard key.publicKey == leaf.publicKey else {
            throw ConfigurationError(
                .file,
                at: "\(name).keyFile",
                "\(keyFile) is not the key of the first certificate in \(certificateFile) (\(leaf.subject), serial \(leaf.serialNumber))"
            )
        }
        return GatewayTLS(chain: chain, chainPEM: chainPEM, keyPEM: keyPEM)
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
    ///
    /// With `clientCA`, a client must present a certificate issued by one of those certificates, or
    /// the handshake fails: the authorization listener's callers (`authorizationListener.clientCAFile`).
    public func channelConfiguration(
        clientCertificates: Bool,
        applicationProtocols: [String] = [],
        clientCA: [NIOSSLCertificate]? = nil
    ) throws -> TLSChannelConfiguration {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(chainPEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem))
        )
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = applicationProtocols
        if let clientCA {
            // Checked by the handshake against these roots alone; a peer's name is not checked.
            tls.certificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates(clientCA)
            return TLSChannelConfiguration(tlsConfiguration: tls)
        }
        guard clientCertificates else { return TLSChannelConfiguration(tlsConfiguration: tls) }
        tls.certificateVerification = .optionalVerification
        // The handshake still proves the client holds the certificate's key (CertificateVerify);
        // whether the certificate is one of ours is decided per route, with a reason code.
        return TLSChannelConfiguration(tlsConfiguration: tls) { _, promise in
            promise.succeed(.certificateVerified)
        }
    }
}
