// SPDX-License-Identifier: Apache-2.0
#if canImport(Security) && canImport(Darwin)
import Foundation
import Security
import SignetCore
import SwiftASN1
import X509

/// The operating system's trust decision on Apple platforms, where swift-certificates'
/// `CertificateStore.systemTrustRoots` finds nothing (it reads Linux CA files): `SecTrust` with the
/// SSL policy for the host, at the given time, with any extra anchors. The shim; pins are checked by
/// ``ServerTrustEvaluator`` on the chain it returns, as on Linux.
enum SystemTrust {
    /// The validated chain (leaf to anchor), or why the served one is not trusted.
    static func validate(
        servedChain: [[UInt8]],
        host: String,
        now: Date,
        extraAnchors: [Certificate]
    ) -> Result<[Certificate], SignetError> {
        let certificates = servedChain.compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
        guard certificates.count == servedChain.count, !certificates.isEmpty else {
            return .failure(SignetError(.certificateUntrusted, "the server sent a certificate that does not parse"))
        }
        var trust: SecTrust?
        guard SecTrustCreateWithCertificates(certificates as CFArray, SecPolicyCreateSSL(true, host as CFString), &trust) == errSecSuccess,
            let trust
        else { return .failure(SignetError(.certificateUntrusted, "the system could not evaluate the chain")) }
        SecTrustSetVerifyDate(trust, now as CFDate)
        if !extraAnchors.isEmpty {
            let anchors = extraAnchors.compactMap { try? $0.serializeAsPEM().derBytes }
                .compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
            SecTrustSetAnchorCertificates(trust, anchors as CFArray)
            SecTrustSetAnchorCertificatesOnly(trust, false)  // the system's roots too
        }
        var failure: CFError?
        guard SecTrustEvaluateWithError(trust, &failure) else {
            let text = failure.map { CFErrorCopyDescription($0) as String } ?? "no path to a trusted root"
            // The system does not say which check failed as a code: tell the likely ones apart.
            let code: SignetError.Code = text.localizedCaseInsensitiveContains("host") ? .hostnameMismatch
                : text.localizedCaseInsensitiveContains("expired") ? .certificateExpired : .certificateUntrusted
            return .failure(SignetError(code, "the chain for \(host) is not trusted: \(text)"))
        }
        let validated = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
        return .success(validated.compactMap { try? Certificate(derEncoded: Array(SecCertificateCopyData($0) as Data)) })
    }
}
#endif
