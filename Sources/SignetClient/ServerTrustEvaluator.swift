// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Decides whether a served certificate chain may be talked to: chain to a trusted root, validity,
/// hostname (swift-certificates' `Verifier`), and only then the pin set for the host.
///
/// Pins are checked against the *validated* chain, so a root pin matches even when the server does
/// not send its root, and a pin never rescues a chain that failed validation: an expired or
/// wrong-host certificate is refused even when its key is pinned.
public struct ServerTrustEvaluator: Sendable {
    public enum Roots: Sendable {
        /// The operating system's trust store: the Security framework's evaluation on Apple
        /// platforms, the CA files swift-certificates reads on Linux.
        case system
        /// Only these roots (a private CA, a development certificate).
        case only([Certificate])
        /// The system's and these.
        case systemAnd([Certificate])
    }

    public var roots: Roots
    public var pinSets: [PinSet]

    public init(roots: Roots = .system, pinSets: [PinSet] = []) {
        self.roots = roots
        self.pinSets = pinSets
    }

    /// Reads PEM certificates (a bundle, or a single certificate).
    public static func certificates(pem: String) throws -> [Certificate] {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: pem)
        } catch {
            throw SignetError(.certificateUntrusted, "not PEM certificates: \(error)")
        }
        let certificates = try documents.filter { $0.discriminator == "CERTIFICATE" }.map {
            try Certificate(derEncoded: $0.derBytes)
        }
        guard !certificates.isEmpty else { throw SignetError(.certificateUntrusted, "no CERTIFICATE in the PEM text") }
        return certificates
    }

    /// The first pin set whose pattern matches `host`, if any.
    public func pinSet(for host: String) -> PinSet? {
        pinSets.first { $0.pattern.matches(host) }
    }

    /// Evaluates a served chain (DER, leaf first) for `host`.
    public func evaluate(servedChain: [[UInt8]], host: String, port: Int, now: Date) async -> ServerTrustResult {
        let served: [Certificate]
        do {
            served = try servedChain.map { try Certificate(derEncoded: $0) }
        } catch {
            return .refused(SignetError(.certificateUntrusted, "the server sent a certificate that does not parse"))
        }
        guard let leaf = served.first else {
            return .refused(SignetError(.certificateUntrusted, "the server sent no certificate"))
        }
        guard leaf.notValidBefore <= now, now <= leaf.notValidAfter else {
            return .refused(
                SignetError(
                    .certificateExpired,
                    "the certificate for \(host) is valid \(leaf.notValidBefore) to \(leaf.notValidAfter), not now"
                )
            )
        }
        #if canImport(Security) && canImport(Darwin)
        // The operating system's roots are the Security framework's to judge on Apple platforms.
        switch roots {
        case .system, .systemAnd:
            let extra: [Certificate]
            if case .systemAnd(let certificates) = roots { extra = certificates } else { extra = [] }
            switch SystemTrust.validate(servedChain: servedChain, host: host, now: now, extraAnchors: extra) {
            case .failure(let error): return .refused(error)
            case .success(let chain): return pinned(chain, servedChain: servedChain, host: host, port: port, now: now)
            }
        case .only: break
        }
        #endif
        let store: CertificateStore
        switch roots {
        case .system: store = CertificateStore.systemTrustRoots
        case .only(let certificates): store = CertificateStore(certificates)
        case .systemAnd(let certificates):
            var combined = CertificateStore.systemTrustRoots
            combined.append(contentsOf: certificates)
            store = combined
        }
        let isIP = Origin.isIPLiteral(host)
        var verifier = Verifier(rootCertificates: store) {
            RFC5280Policy(fixedExpiryValidationTime: now)
            ServerIdentityPolicy(serverHostname: isIP ? nil : host, serverIP: isIP ? host : nil)
        }
        let intermediates = CertificateStore(served.dropFirst())
        let chain: [Certificate]
        switch await verifier.validate(leaf: leaf, intermediates: intermediates) {
        case .validCertificate(let validated):
            chain = Array(validated)
        case .couldNotValidate(let failures):
            // Tell a wrong host from an untrusted chain: validate again without the identity check.
            var chainOnly = Verifier(rootCertificates: store) { RFC5280Policy(fixedExpiryValidationTime: now) }
            if case .validCertificate = await chainOnly.validate(leaf: leaf, intermediates: intermediates) {
                return .refused(SignetError(.hostnameMismatch, "the certificate does not name \(host)"))
            }
            let reason = failures.first.map { "\($0.policyFailureReason)" } ?? "no path to a trusted root"
            return .refused(SignetError(.certificateUntrusted, "the chain for \(host) is not trusted: \(reason)"))
        }
        return pinned(chain, servedChain: servedChain, host: host, port: port, now: now)
    }

    /// The pin check on a validated chain, where the host is pinned.
    func pinned(_ chain: [Certificate], servedChain: [[UInt8]], host: String, port: Int, now: Date)
        -> ServerTrustResult
    {
        guard let pinSet = pinSet(for: host) else { return ServerTrustResult(error: nil, pins: nil, chain: chain) }
        let evaluation = pinSet.evaluate(
            chain: chain.map { (try? $0.serializeAsPEM().derBytes) ?? [] },
            servedChain: servedChain,
            host: host,
            port: port,
            now: now
        )
        return ServerTrustResult(error: evaluation.error, pins: evaluation, chain: chain)
    }
}

/// What ``ServerTrustEvaluator`` decided.
public struct ServerTrustResult: Sendable {
    /// Why the connection must not go ahead; `nil` to proceed.
    public var error: SignetError?
    /// The pin check, when the host is pinned (and the chain validated). A failure report, if any,
    /// is in `pins?.report` — also in report-only mode, where `error` is `nil`.
    public var pins: PinEvaluation?
    /// The validated chain, leaf to root.
    public var chain: [Certificate]

    static func refused(_ error: SignetError) -> ServerTrustResult {
        ServerTrustResult(error: error, pins: nil, chain: [])
    }
}
