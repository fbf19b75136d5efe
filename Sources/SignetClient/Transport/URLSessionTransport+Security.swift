// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Security) && canImport(Darwin)
import Security

/// The Apple-only part of ``URLSessionTransport`` (not compiled on Linux; see docs/ios.md).
extension URLSessionTransportDelegate {
    /// The chain the server sent (DER, leaf first) with the handshake's own `SecTrust`, which the
    /// client evaluates in place, and the credential that accepts it.
    static func servedChain(_ space: URLProtectionSpace) -> (ServedChain, URLCredential)? {
        guard let trust = space.serverTrust else { return nil }
        let certificates = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
        guard !certificates.isEmpty else { return nil }
        var served = ServedChain(der: certificates.map { Array(SecCertificateCopyData($0) as Data) })
        served.trust = trust
        return (served, URLCredential(trust: trust))
    }

    /// A `SecIdentity` for the PEM identity, through a PKCS #12 archive `SecPKCS12Import` reads
    /// (the one way Security imports a private key with its certificate), with a password used once.
    static func credential(for identity: ClientIdentity) throws -> URLCredential {
        let password = UUID().uuidString
        let archive = try PKCS12Archive.export(
            chainPEM: identity.certificateChainPEM,
            privateKeyPEM: identity.privateKeyPEM,
            password: password
        )
        var items: CFArray?
        var options: [String: Any] = [kSecImportExportPassphrase as String: password]
        #if os(macOS)
        // Else macOS imports into the login keychain: the identity would outlive the session on disk.
        options[kSecImportToMemoryOnly as String] = true
        #endif
        let status = SecPKCS12Import(Data(archive) as CFData, options as CFDictionary, &items)
        guard status == errSecSuccess, let item = (items as? [[String: Any]])?.first,
            let found = item[kSecImportItemIdentity as String]
        else { throw SignetError(.invalidKey, "the system did not import the client identity (OSStatus \(status))") }
        let chain = (item[kSecImportItemCertChain as String] as? [SecCertificate]) ?? []
        // swift-format-ignore: a CFType from a dictionary is cast unconditionally, as Apple shows.
        return URLCredential(identity: found as! SecIdentity, certificates: Array(chain.dropFirst()), persistence: .forSession)
    }
}
#else
extension URLSessionTransportDelegate {
    /// FoundationNetworking presents no client certificate.
    static func credential(for identity: ClientIdentity) throws -> URLCredential {
        throw SignetError(.invalidKey, "URLSession on this platform cannot present a client certificate; use SignetTransport.nio() here")
    }
}
#endif
