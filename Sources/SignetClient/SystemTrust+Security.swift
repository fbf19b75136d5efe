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
        if !extraAnchors.isEmpty { apply(.systemAnd(extraAnchors), to: trust) }
        return evaluate(trust, host: host)
    }

    /// Evaluates `trust` as it is (policy, anchors and any OCSP response and SCTs it carries):
    /// the validated chain, or the refusal with its code from the `CFError`'s `OSStatus`.
    static func evaluate(_ trust: SecTrust, host: String) -> Result<[Certificate], SignetError> {
        var failure: CFError?
        guard SecTrustEvaluateWithError(trust, &failure) else {
            let status = failure.map { Int(CFErrorGetCode($0)) } ?? SystemTrustFailure.notTrusted
            return .failure(
                SignetError(
                    SystemTrustFailure.code(osStatus: status),
                    "the chain for \(host) is not trusted: \(SystemTrustFailure.explanation(osStatus: status))"
                )
            )
        }
        let validated = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
        return .success(validated.compactMap { try? Certificate(derEncoded: Array(SecCertificateCopyData($0) as Data)) })
    }

    /// Sets `roots` on `trust`: the private anchors, alone (`.only`) or beside the system's.
    static func apply(_ roots: ServerTrustEvaluator.Roots, to trust: SecTrust) {
        let (extra, only): ([Certificate], Bool)
        switch roots {
        case .system: return
        case .only(let certificates): (extra, only) = (certificates, true)
        case .systemAnd(let certificates): (extra, only) = (certificates, false)
        }
        let anchors = extra.compactMap { try? $0.serializeAsPEM().derBytes }
            .compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
        SecTrustSetAnchorCertificates(trust, anchors as CFArray)
        SecTrustSetAnchorCertificatesOnly(trust, only)
    }
}

extension ServerTrustEvaluator {
    /// Evaluates a handshake's own `SecTrust` for `host`: the configured roots set on it, the
    /// system's evaluation (hostname, validity, revocation and Certificate Transparency with the
    /// stapled OCSP response and TLS-delivered SCTs the handshake carries), then the pin set on the
    /// chain it validated. What ``SignetClient``'s `URLSession` transport asks on Apple platforms.
    public func evaluate(serverTrust trust: SecTrust, servedChain: [[UInt8]], host: String, port: Int, now: Date)
        -> ServerTrustResult
    {
        SystemTrust.apply(roots, to: trust)
        switch SystemTrust.evaluate(trust, host: host) {
        case .failure(let error): return .refused(error)
        case .success(let chain): return pinned(chain, servedChain: servedChain, host: host, port: port, now: now)
        }
    }
}
#endif
