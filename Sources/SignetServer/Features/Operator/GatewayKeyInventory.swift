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

    /// The entries the features name, in their order.
    init(entries: [Entry]) {
        self.entries = entries
    }

    static func certificate(_ role: String, _ certificate: Certificate) -> Entry {
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
