// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetAppAttest
import SwiftASN1
import X509

/// A software stand-in for Apple's receipt signer: a P-256 key whose certificate carries the
/// receipt-signing extension, under an intermediate of a ``DevelopmentAttestationCA``'s root. It writes
/// receipts in Apple's layout (CMS SignedData over the field set), for tests, the demo and the
/// Apple-like receipt exchange the tests run against.
public struct DevelopmentReceiptSigner: Sendable {
    public let intermediate: Certificate
    public let certificate: Certificate
    private let key: P256.Signing.PrivateKey

    init(
        rootName: DistinguishedName,
        rootKey: P384.Signing.PrivateKey,
        now: Date,
        receiptSigningExtension: Bool = true
    ) throws {
        let intermediateKey = P384.Signing.PrivateKey()
        key = P256.Signing.PrivateKey()
        let intermediateName = try DistinguishedName {
            CommonName("Signet Simulator Application Integration CA")
            OrganizationName("Signet")
        }
        intermediate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(intermediateKey.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400),
            notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
            issuer: rootName,
            subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(rootKey)
        )
        certificate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400),
            notValidAfter: now.addingTimeInterval(400 * 86_400),
            issuer: intermediateName,
            subject: try DistinguishedName {
                CommonName("Signet Simulator Fraud Receipt Signing")
                OrganizationName("Signet")
            },
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if receiptSigningExtension {
                    Certificate.Extension(
                        oid: AppAttestReceiptVerifier.receiptSigningExtension,
                        critical: false,
                        value: [0x05, 0x00]
                    )
                }
            },
            issuerPrivateKey: .init(intermediateKey)
        )
    }

    /// A receipt with these fields, signed over the content (as Apple does) or, with
    /// `signedAttributes`, over RFC 5652 signed attributes; `extraCertificates` are carried after
    /// the signer's and the intermediate (verifiers bound how many they look at).
    public func receipt(
        _ fields: AppAttestReceipt,
        signedAttributes: Bool = false,
        extraCertificates: [Certificate] = []
    ) throws -> [UInt8] {
        let content = try Self.payload(fields)
        // The attributes' elements: under SET for the signature, under [0] IMPLICIT in the object.
        var elements: [UInt8]?
        var attributes: [UInt8]?
        if signedAttributes {
            var list = DER.Serializer()
            try list.appendConstructedNode(identifier: .sequence) { attribute in
                try attribute.serialize(Self.contentTypeOID)
                try attribute.appendConstructedNode(identifier: .set) { try $0.serialize(Self.dataOID) }
            }
            try list.appendConstructedNode(identifier: .sequence) { attribute in
                try attribute.serialize(Self.messageDigestOID)
                try attribute.appendConstructedNode(identifier: .set) {
                    try $0.serialize(ASN1OctetString(contentBytes: ArraySlice(SHA256.hash(data: content))))
                }
            }
            elements = list.serializedBytes
            var set = DER.Serializer()
            set.appendConstructedNode(identifier: .set) { $0.serializeRawBytes(list.serializedBytes) }
            attributes = set.serializedBytes
        }
        let signature = try Array(key.signature(for: attributes ?? content).derRepresentation)
        var certificates: [[UInt8]] = []
        for certificate in [certificate, intermediate] + extraCertificates {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            certificates.append(serializer.serializedBytes)
        }
        var out = DER.Serializer()
        try out.appendConstructedNode(identifier: .sequence) { info in
            try info.serialize(Self.signedDataOID)
            try info.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { tagged in
                try tagged.appendConstructedNode(identifier: .sequence) { signed in
                    try signed.serialize(1)
                    try signed.appendConstructedNode(identifier: .set) { try Self.algorithm(Self.sha256OID, &$0) }
                    try signed.appendConstructedNode(identifier: .sequence) { encapsulated in
                        try encapsulated.serialize(Self.dataOID)
                        try encapsulated.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) {
                            try $0.serialize(ASN1OctetString(contentBytes: ArraySlice(content)))
                        }
                    }
                    signed.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) {
                        for der in certificates { $0.serializeRawBytes(der) }
                    }
                    try signed.appendConstructedNode(identifier: .set) { set in
                        try set.appendConstructedNode(identifier: .sequence) { signer in
                            try signer.serialize(1)
                            try signer.appendConstructedNode(identifier: .sequence) { sid in
                                try sid.serialize(certificate.issuer)
                                sid.appendPrimitiveNode(identifier: .integer) {
                                    $0.append(contentsOf: certificate.serialNumber.bytes)
                                }
                            }
                            try signer.appendConstructedNode(identifier: .sequence) { try Self.algorithm(Self.sha256OID, &$0) }
                            if let elements {
                                signer.appendConstructedNode(
                                    identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
                                ) { $0.serializeRawBytes(elements) }
                            }
                            try signer.appendConstructedNode(identifier: .sequence) {
                                try $0.serialize(Self.ecdsaWithSHA256OID)
                            }
                            try signer.serialize(ASN1OctetString(contentBytes: ArraySlice(signature)))
                        }
                    }
                }
            }
        }
        return out.serializedBytes
    }

    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let contentTypeOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 3]
    static let messageDigestOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 4]
    static let ecdsaWithSHA256OID: ASN1ObjectIdentifier = [1, 2, 840, 10_045, 4, 3, 2]
    static let sha256OID: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]

    private static func algorithm(_ oid: ASN1ObjectIdentifier, _ coder: inout DER.Serializer) throws {
        try coder.serialize(oid)
    }

    /// The field set, in field order.
    package static func payload(_ fields: AppAttestReceipt) throws -> [UInt8] {
        var entries: [(AppAttestReceipt.Field, [UInt8])] = [
            (.appID, Array(fields.appID.utf8)),
            (.attestedPublicKey, fields.attestedCertificate),
            (.clientHash, fields.clientHash),
            (.token, fields.token),
            (.receiptType, Array(fields.kind.rawValue.utf8)),
        ]
        if let environment = fields.environment { entries.append((.environment, Array(environment.utf8))) }
        entries.append((.creationTime, Array(Self.date(fields.createdAt).utf8)))
        if let risk = fields.riskMetric { entries.append((.riskMetric, Array(String(risk).utf8))) }
        if let notBefore = fields.notBefore { entries.append((.notBefore, Array(Self.date(notBefore).utf8))) }
        entries.append((.expirationTime, Array(Self.date(fields.expiresAt).utf8)))
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .set) { set in
            for (field, value) in entries {
                try set.appendConstructedNode(identifier: .sequence) { entry in
                    try entry.serialize(field.rawValue)
                    try entry.serialize(1)
                    try entry.serialize(ASN1OctetString(contentBytes: ArraySlice(value)))
                }
            }
        }
        return serializer.serializedBytes
    }

    static func date(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
