// SPDX-License-Identifier: Apache-2.0
import Crypto
import SwiftASN1

/// A public-key pin: SHA-256 of a SubjectPublicKeyInfo DER (RFC 7469 §2.4), for any key type.
///
/// Computed from the SPKI bytes exactly as they sit in the certificate, so RSA, EC and Ed25519 keys
/// all pin the same way `openssl x509 -pubkey | openssl pkey -pubin -outform DER | sha256` does.
public struct SPKIPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte SHA-256 digest.
    public let digest: [UInt8]

    public init(digest: [UInt8]) throws {
        guard digest.count == 32 else { throw SignetError(.malformedHeader, "a SHA-256 pin has 32 bytes") }
        self.digest = digest
    }

    /// The pin of a SubjectPublicKeyInfo DER.
    public init(spkiDER: some Sequence<UInt8>) {
        self.digest = Array(SHA256.hash(data: Array(spkiDER)))
    }

    /// The pin of a certificate's public key.
    public init(certificateDER: [UInt8]) throws {
        self.init(spkiDER: try Self.subjectPublicKeyInfo(certificateDER: certificateDER))
    }

    /// Parses `sha256/<base64>`, `pin-sha256="<base64>"` or bare base64.
    public init(parsing text: String) throws {
        var value = text.trimmingOWSAndNewlines
        if value.hasPrefix("sha256/") {
            value.removeFirst("sha256/".count)
        } else if value.hasPrefix("pin-sha256=") {
            value.removeFirst("pin-sha256=".count)
            guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else {
                throw SignetError(.malformedHeader, "pin-sha256 needs a quoted value")
            }
            value = String(value.dropFirst().dropLast())
        }
        guard let digest = Base64.decode(value) else { throw SignetError(.malformedHeader, "the pin is not base64") }
        try self.init(digest: digest)
    }

    public var base64: String { Base64.encode(digest) }

    /// `sha256/<base64>`, the OkHttp and Signet spelling.
    public var description: String { "sha256/" + base64 }

    /// `pin-sha256="<base64>"`, the HPKP spelling.
    public var hpkpDescription: String { "pin-sha256=\"\(base64)\"" }

    /// The DER of the certificate's SubjectPublicKeyInfo, byte for byte (RFC 5280 §4.1).
    public static func subjectPublicKeyInfo(certificateDER: [UInt8]) throws -> ArraySlice<UInt8> {
        do {
            return try DER.sequence(try DER.parse(certificateDER), identifier: .sequence) { certificate in
                guard let tbs = certificate.next() else { throw SignetError(.malformedHeader, "empty certificate") }
                while certificate.next() != nil {}
                return try DER.sequence(tbs, identifier: .sequence) { fields in
                    // [0] version is optional; then serial, signature, issuer, validity, subject, SPKI.
                    var skip = 5
                    guard let first = fields.next() else { throw SignetError(.malformedHeader, "empty TBSCertificate") }
                    if first.identifier != ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) { skip -= 1 }
                    for _ in 0..<skip { _ = fields.next() }
                    guard let spki = fields.next(), spki.identifier == .sequence else {
                        throw SignetError(.malformedHeader, "certificate has no SubjectPublicKeyInfo")
                    }
                    while fields.next() != nil {}
                    return spki.encodedBytes
                }
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.malformedHeader, "not a DER certificate: \(error)")
        }
    }
}
