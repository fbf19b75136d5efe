// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetMiddleware
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Signet's device CA: issues a client certificate from the CSR a device sends at registration (its
/// private key never leaves the device), and checks the certificates presented over mutual TLS.
///
/// A certificate names its device twice: the subject CN and a `signet:device:<id>` URI. The serial
/// is stored with the device, so after a revocation no certificate of that device is honoured, even
/// one still inside its validity.
public struct DeviceCertificateAuthority: Sendable {
    public let issuer: CertificateIssuer
    public let validity: TimeInterval

    public init(issuer: CertificateIssuer, validityDays: Int = 30) {
        self.issuer = issuer
        self.validity = TimeInterval(validityDays) * 86_400
    }

    /// The CA from files, or — when they do not exist yet — a new CA written to them (mode 0600),
    /// so every gateway instance sharing the files issues under one CA.
    ///
    /// Instances starting together on one volume agree on one CA: the key is created exclusively
    /// (as the token keys are), and the instance whose key was linked into place writes its certificate
    /// next; the others wait for that certificate rather than write their own beside its key.
    public static func loadOrCreate(certificateFile: String, keyFile: String, validityDays: Int) throws
        -> DeviceCertificateAuthority
    {
        let files = FileManager.default
        if !files.fileExists(atPath: certificateFile) && !files.fileExists(atPath: keyFile) {
            let ca = try CertificateIssuer.selfSignedCA(commonName: "Signet Device CA")
            let ours = try ca.privateKeyPEM
            let key = try PrivateKeyFile.loadOrCreate(keyFile, what: "the device CA key", at: "deviceCA.keyFile") { ours }
            if key == ours {
                let certificate = try ca.certificatePEM
                _ = try PrivateKeyFile.loadOrCreate(certificateFile, what: "the device CA certificate", at: "deviceCA.certificateFile") { certificate }
            }
        }
        // Another instance starting with this one wrote the key and is writing the certificate
        // (also when this one found the key already there, between the two): it follows within
        // moments. A key written long ago without its certificate is refused at once below.
        if !files.fileExists(atPath: certificateFile),
            let written = (try? files.attributesOfItem(atPath: keyFile))?[.modificationDate] as? Date,
            Date().timeIntervalSince(written) < 30
        {
            for _ in 0..<100 where !files.fileExists(atPath: certificateFile) { usleep(100_000) }
        }
        return DeviceCertificateAuthority(
            issuer: try CertificateIssuer.load(certificateFile: certificateFile, keyFile: keyFile),
            validityDays: validityDays
        )
    }

    /// Issues a client certificate for `deviceID` from a PEM or base64-DER CSR whose key must be
    /// `expectedKey` (the key that proved possession of the challenge).
    public func issue(csr text: String, deviceID: String, expectedKey: VerificationKey, now: Date) throws
        -> Certificate
    {
        let csr: CertificateSigningRequest
        do {
            if text.contains("-----BEGIN") {
                csr = try CertificateSigningRequest(pemEncoded: text)
            } else if let der = Base64.decode(text) {
                csr = try CertificateSigningRequest(derEncoded: der)
            } else {
                throw SignetError(.malformedMessage, "the CSR is neither PEM nor base64 DER")
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.malformedMessage, "the CSR does not parse: \(error)")
        }
        guard csr.publicKey.isValidSignature(csr.signature, for: csr) else {
            throw SignetError(.signatureInvalid, "the CSR's signature does not verify")
        }
        var spki = DER.Serializer()
        try spki.serialize(csr.publicKey)
        guard spki.serializedBytes == expectedKey.spkiDER else {
            throw SignetError(.keyMismatch, "the CSR is for a different key than the one registered")
        }
        return try issuer.issue(
            commonName: deviceID,
            publicKey: csr.publicKey,
            usage: .client,
            uris: ["signet:device:\(deviceID)"],
            notBefore: now.addingTimeInterval(-300),
            notAfter: now.addingTimeInterval(validity)
        )
    }

    /// Checks a presented client certificate against this CA; returns the device id and serial.
    public func verify(clientCertificateDER der: [UInt8], now: Date) async throws -> (deviceID: String, serial: String) {
        let certificate: Certificate
        do {
            certificate = try Certificate(derEncoded: der)
        } catch {
            throw SignetError(.clientCertificateUntrusted, "the client certificate does not parse")
        }
        var verifier = Verifier(rootCertificates: CertificateStore([issuer.certificate])) {
            RFC5280Policy(fixedExpiryValidationTime: now)
        }
        guard case .validCertificate = await verifier.validate(leaf: certificate, intermediates: CertificateStore())
        else {
            throw SignetError(.clientCertificateUntrusted, "the client certificate is not from the device CA, or expired")
        }
        let uris = (try? certificate.extensions.subjectAlternativeNames)??.compactMap { name -> String? in
            if case .uniformResourceIdentifier(let uri) = name { return uri }
            return nil
        } ?? []
        guard let uri = uris.first(where: { $0.hasPrefix("signet:device:") }) else {
            throw SignetError(.clientCertificateUntrusted, "the client certificate names no device")
        }
        return (String(uri.dropFirst("signet:device:".count)), Self.serial(certificate))
    }

    static func serial(_ certificate: Certificate) -> String {
        certificate.serialNumber.bytes.map { String(format: "%02x", $0) }.joined()
    }
}

extension DeviceCertificateAuthority: ClientCertificateIssuing {
    /// What registration hands the device: the certificate, then this CA's certificate.
    public func issueClientCertificate(
        csr: String,
        deviceID: String,
        expectedKey: VerificationKey,
        now: Date
    ) throws -> IssuedClientCertificate {
        let certificate = try issue(csr: csr, deviceID: deviceID, expectedKey: expectedKey, now: now)
        return IssuedClientCertificate(
            pemChain: try certificate.serializeAsPEM().pemString + "\n" + issuer.certificatePEM + "\n",
            serial: Self.serial(certificate),
            notAfter: certificate.notValidAfter
        )
    }
}
