// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// Issues the client certificate a device asks for with a CSR at registration, for mutual TLS later.
///
/// A protocol so the registration routes need no certificate authority of their own: the gateway's
/// `DeviceCertificateAuthority` adopts it, and an app with its own CA (step-ca, a cloud PKI) can too.
public protocol ClientCertificateIssuing: Sendable {
    /// Issues a certificate for the key in `csr`, which must be `expectedKey` — the key that just
    /// proved possession of the challenge — and must be signed by it.
    ///
    /// - Parameters:
    ///   - csr: A PKCS #10 request, PEM or base64 DER.
    ///   - deviceID: The device the certificate names.
    ///   - expectedKey: The registered key.
    ///   - now: The issuing time.
    /// - Throws: `SignetError` (`malformed_message`, `invalid_key`, `signature_invalid`).
    func issueClientCertificate(
        csr: String,
        deviceID: String,
        expectedKey: VerificationKey,
        now: Date
    ) throws -> IssuedClientCertificate
}

/// A certificate issued at registration.
public struct IssuedClientCertificate: Sendable {
    /// The certificate followed by its issuer, PEM: what the device installs.
    public var pemChain: String
    /// The serial number, hexadecimal, kept with the device.
    public var serial: String
    /// The end of the validity period.
    public var notAfter: Date

    public init(pemChain: String, serial: String, notAfter: Date) {
        self.pemChain = pemChain
        self.serial = serial
        self.notAfter = notAfter
    }
}
