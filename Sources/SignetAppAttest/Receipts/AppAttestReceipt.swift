// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SwiftASN1

/// The payload of an App Attest receipt (Apple, "Assessing fraud risk"): a `SET` of
/// `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
///
/// A value read here is only worth trusting once ``AppAttestReceiptVerifier`` checked the signature,
/// the chain and the binding to the device.
public struct AppAttestReceipt: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// Made with the attestation.
        case attest = "ATTEST"
        /// Returned by Apple's receipt exchange; carries the risk metric.
        case receipt = "RECEIPT"
    }

    /// Field 2: `TEAMID.bundle.id`.
    public var appID: String
    /// Field 3: the attested key's certificate (DER), as the attestation's leaf.
    public var attestedCertificate: [UInt8]
    /// Field 4: the client data hash of the attestation (ATTEST) or of the exchange.
    public var clientHash: [UInt8]
    /// Field 5: an opaque token Apple uses for the exchange.
    public var token: [UInt8]
    /// Field 6.
    public var kind: Kind
    /// Field 7: `production` or `sandbox`, where present.
    public var environment: String?
    /// Field 12.
    public var createdAt: Date
    /// Field 17: roughly how many keys the app attested on this device lately (RECEIPT only).
    public var riskMetric: Int?
    /// Field 19: the earliest time Apple will exchange the receipt for a new one (RECEIPT only).
    public var notBefore: Date?
    /// Field 21: after this Apple will not exchange it.
    public var expiresAt: Date
    /// The receipt as received (BER CMS), kept for the next exchange.
    public var bytes: [UInt8]

    public init(
        appID: String,
        attestedCertificate: [UInt8],
        clientHash: [UInt8],
        token: [UInt8],
        kind: Kind,
        environment: String? = nil,
        createdAt: Date,
        riskMetric: Int? = nil,
        notBefore: Date? = nil,
        expiresAt: Date,
        bytes: [UInt8] = []
    ) {
        self.appID = appID
        self.attestedCertificate = attestedCertificate
        self.clientHash = clientHash
        self.token = token
        self.kind = kind
        self.environment = environment
        self.createdAt = createdAt
        self.riskMetric = riskMetric
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.bytes = bytes
    }

    /// Field numbers, as Apple documents them.
    public enum Field: Int, Sendable, CaseIterable {
        case appID = 2, attestedPublicKey = 3, clientHash = 4, token = 5, receiptType = 6, environment = 7
        case creationTime = 12, riskMetric = 17, notBefore = 19, expirationTime = 21
    }

    /// Reads the payload (`eContent`). Unknown fields are skipped; a repeated or malformed known field,
    /// or a missing required one, is `receipt_invalid`.
    package init(payload: [UInt8], bytes: [UInt8]) throws {
        var fields: [Field: [UInt8]] = [:]
        do {
            let root = try BER.parse(payload)
            try BER.set(root, identifier: .set) { nodes in
                while let node = nodes.next() {
                    let (type, value) = try BER.sequence(node, identifier: .sequence) { entry in
                        let type = try Int(berEncoded: &entry)
                        _ = try Int(berEncoded: &entry)  // version
                        let value = try ASN1OctetString(berEncoded: &entry)
                        return (type, Array(value.bytes))
                    }
                    guard let field = Field(rawValue: type) else { continue }
                    guard fields.updateValue(value, forKey: field) == nil else {
                        throw SignetError(.receiptInvalid, "receipt field \(type) appears twice")
                    }
                }
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.receiptInvalid, "the receipt's payload does not parse: \(error)")
        }
        func required(_ field: Field) throws -> [UInt8] {
            guard let value = fields[field] else {
                throw SignetError(.receiptInvalid, "receipt field \(field.rawValue) (\(field)) is missing")
            }
            return value
        }
        func text(_ field: Field) throws -> String? {
            guard let value = fields[field] else { return nil }
            guard let text = String(strictUTF8: value) else {
                throw SignetError(.receiptInvalid, "receipt field \(field.rawValue) (\(field)) is not UTF-8")
            }
            return text
        }
        func date(_ field: Field) throws -> Date? {
            guard let text = try text(field) else { return nil }
            guard let date = Self.date(text) else {
                throw SignetError(.receiptInvalid, "receipt field \(field.rawValue) (\(field)) is not a date: \(text)")
            }
            return date
        }
        guard let appID = try text(.appID), let kindText = try text(.receiptType),
            let createdAt = try date(.creationTime), let expiresAt = try date(.expirationTime)
        else { throw SignetError(.receiptInvalid, "the receipt lacks its app id, type, creation or expiry") }
        guard let kind = Kind(rawValue: kindText) else {
            throw SignetError(.receiptInvalid, "unknown receipt type \(kindText)")
        }
        var riskMetric: Int?
        if let text = try text(.riskMetric), !text.isEmpty {
            guard let value = Int(text), value >= 0 else {
                throw SignetError(.receiptInvalid, "the risk metric is not a count: \(text)")
            }
            riskMetric = value
        }
        self.init(
            appID: appID,
            attestedCertificate: try required(.attestedPublicKey),
            clientHash: try required(.clientHash),
            token: try required(.token),
            kind: kind,
            environment: try text(.environment),
            createdAt: createdAt,
            riskMetric: riskMetric,
            notBefore: try date(.notBefore),
            expiresAt: expiresAt,
            bytes: bytes
        )
    }

    /// ISO 8601 as Apple writes it, `2021-01-25T09:24:12.76Z`: fractional seconds optional.
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
