// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// The reason code for a failed `SecTrustEvaluateWithError`, from its `CFError`'s code (an
/// `OSStatus` in `NSOSStatusErrorDomain`) — never from the English description, which changes with
/// the OS version and the user's language. Plain numbers so that it builds and is tested on Linux,
/// where Security does not exist; the values are Security's (`SecBase.h`).
enum SystemTrustFailure {
    static let hostNameMismatch = -67602  // errSecHostNameMismatch
    static let certificateExpired = -67818  // errSecCertificateExpired
    static let certificateNotValidYet = -67819  // errSecCertificateNotValidYet
    static let certificateRevoked = -67820  // errSecCertificateRevoked
    static let notTrusted = -67843  // errSecNotTrusted
    /// The TLS-level error ATS reports when it refuses a chain the app accepted (`SecureTransport.h`).
    static let atsCertificateTrustViolation = -9886  // errSSLATSCertificateTrustViolation

    static func code(osStatus: Int) -> SignetError.Code {
        switch osStatus {
        case hostNameMismatch: .hostnameMismatch
        case certificateExpired, certificateNotValidYet: .certificateExpired
        default: .certificateUntrusted
        }
    }

    /// What the system's refusal says, for humans (the code is what apps branch on).
    static func explanation(osStatus: Int) -> String {
        switch osStatus {
        case hostNameMismatch: "the certificate does not name the host"
        case certificateExpired: "a certificate in the chain has expired"
        case certificateNotValidYet: "a certificate in the chain is not valid yet (is the device's clock right?)"
        case certificateRevoked: "a certificate in the chain was revoked"
        case notTrusted: "the chain does not lead to a trusted root, or fails the system's policy (Certificate Transparency)"
        default: "the system refused the chain (OSStatus \(osStatus))"
        }
    }
}
