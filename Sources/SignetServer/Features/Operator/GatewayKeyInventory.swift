// SPDX-License-Identifier: Apache-2.0
import _CryptoExtras
import Crypto
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

    /// A certificate by subject and serial (a renewal shows as a new serial), and its key's algorithm.
    static func certificate(_ role: String, _ certificate: Certificate) -> Entry {
        Entry(
            role: role,
            name: "\(certificate.subject), serial \(serial(certificate.serialNumber))",
            algorithm: keyAlgorithm(certificate.publicKey),
            notBefore: certificate.notValidBefore,
            notAfter: certificate.notValidAfter
        )
    }

    /// Hex, as `openssl x509 -serial` prints it: without the zero byte DER puts before a serial
    /// whose top bit is set.
    static func serial(_ number: Certificate.SerialNumber) -> String {
        var bytes = number.bytes[...]
        while bytes.count > 1, bytes.first == 0 { bytes = bytes.dropFirst() }
        return bytes.map { String(format: "%02X", $0) }.joined()
    }

    /// `ECDSA P-256`, `Ed25519`, `RSA 2048` — what an operator reads, not the library's type name.
    static func keyAlgorithm(_ key: Certificate.PublicKey) -> String {
        if P256.Signing.PublicKey(key) != nil { return "ECDSA P-256" }
        if P384.Signing.PublicKey(key) != nil { return "ECDSA P-384" }
        if P521.Signing.PublicKey(key) != nil { return "ECDSA P-521" }
        if Curve25519.Signing.PublicKey(key) != nil { return "Ed25519" }
        if let rsa = _RSA.Signing.PublicKey(key) { return "RSA \(rsa.keySizeInBits)" }
        return "unknown"
    }

    /// `expired`, `expires soon` (within ``warningPeriod``), `not yet valid`, `valid`, or `no expiry`.
    static func status(of entry: Entry, at now: Date) -> String {
        if let notBefore = entry.notBefore, now < notBefore { return "not yet valid" }
        guard let notAfter = entry.notAfter else { return "no expiry" }
        if notAfter <= now { return "expired" }
        return notAfter.timeIntervalSince(now) < warningPeriod ? "expires soon" : "valid"
    }
}
