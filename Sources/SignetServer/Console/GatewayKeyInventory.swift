// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetMiddleware
import X509

/// Every key and certificate the gateway holds, by name and validity: what the console's Keys page
/// lists. Never key material: ids, algorithms, fingerprints of public parts, and dates.
struct GatewayKeyInventory: Sendable {
    struct Entry: Sendable {
        /// What the key is for.
        var role: String
        /// Its id, subject or fingerprint.
        var name: String
        var algorithm: String
        var notBefore: Date?
        var notAfter: Date?
    }

    /// Warn this long before a key or certificate expires.
    static let warningPeriod: TimeInterval = 30 * 86_400

    let entries: [Entry]

    init(gateway: SignetGateway) {
        let configuration = gateway.configuration
        var entries: [Entry] = []
        for secret in configuration.sharedSecrets {
            entries.append(
                Entry(
                    role: "shared secret",
                    name: secret.keyId,
                    algorithm: "hmac-sha256",
                    notBefore: secret.notBefore,
                    notAfter: secret.notAfter
                )
            )
        }
        if let signing = configuration.responseSigning, let signer = gateway.responseSigner {
            entries.append(Entry(role: "response signing", name: signing.keyId, algorithm: signer.algorithm.name))
        }
        if let leaf = gateway.tls?.chain.first {
            entries.append(Self.certificate("TLS certificate", leaf))
        }
        if let ca = gateway.deviceCA {
            entries.append(Self.certificate("device CA", ca.issuer.certificate))
        }
        if let issuer = gateway.tokenIssuer {
            for (index, key) in issuer.ring.keys.enumerated() {
                let role =
                    key.kid == issuer.ring.signingKID ? "app token signing" : key.until == nil ? "app token next" : "app token retired"
                entries.append(
                    Entry(role: role, name: key.kid, algorithm: "ES256", notAfter: index == 0 ? nil : key.until)
                )
            }
        }
        for entry in gateway.ohttpKeys?.entries ?? [] {
            let configuration = entry.key.configuration
            entries.append(
                Entry(
                    role: "Oblivious HTTP",
                    name: "key id \(configuration.keyID)",
                    algorithm: configuration.kem == OHTTPAlgorithms.kemX25519 ? "X25519" : "P-256",
                    notBefore: entry.notBefore,
                    notAfter: entry.notAfter
                )
            )
        }
        if let exchange = configuration.appAttest?.receiptExchange {
            entries.append(Entry(role: "App Attest receipt exchange", name: exchange.keyId, algorithm: "ES256"))
        }
        if let trust = gateway.trustDocument {
            entries.append(
                Entry(role: "trust document", name: "version \(trust.version)", algorithm: "JWS", notAfter: trust.expires)
            )
        }
        self.entries = entries
    }

    private static func certificate(_ role: String, _ certificate: Certificate) -> Entry {
        Entry(
            role: role,
            name: certificate.subject.description,
            algorithm: certificate.signatureAlgorithm.description,
            notBefore: certificate.notValidBefore,
            notAfter: certificate.notValidAfter
        )
    }

    /// `expired`, `expires soon` (within ``warningPeriod``), `not yet valid`, `valid`, or `no expiry`.
    static func status(of entry: Entry, at now: Date) -> String {
        if let notBefore = entry.notBefore, now < notBefore { return "not yet valid" }
        guard let notAfter = entry.notAfter else { return "no expiry" }
        if notAfter <= now { return "expired" }
        return notAfter.timeIntervalSince(now) < warningPeriod ? "expires soon" : "valid"
    }
}
