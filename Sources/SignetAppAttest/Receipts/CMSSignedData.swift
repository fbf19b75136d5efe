// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SwiftASN1
import X509

/// The parts of a CMS `SignedData` (RFC 5652 §5) an App Attest receipt uses, read as BER.
///
/// Apple sends receipts with indefinite lengths and a chunked content octet string, which DER
/// readers (swift-certificates' CMS among them) refuse; swift-asn1's BER parser reads them, bounded
/// in depth. One signer, ECDSA with SHA-256, content type `id-data`: anything else is refused.
package struct CMSSignedData: Sendable {
    /// The signed content (`eContent`), the receipt's payload.
    package var content: [UInt8]
    /// The certificates the object carries, in order (leaf first in Apple's receipts).
    var certificates: [Certificate]
    var signer: Signer

    struct Signer: Sendable {
        var issuer: DistinguishedName
        var serialNumber: ArraySlice<UInt8>
        /// The DER of the signed attributes as a `SET OF` (what a standard signature covers); nil when absent.
        var signedAttributes: [UInt8]?
        /// The `messageDigest` attribute, when signed attributes are present.
        var messageDigest: [UInt8]?
        var signature: [UInt8]
    }

    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    static let sha256OID: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let ecdsaWithSHA256OID: ASN1ObjectIdentifier = [1, 2, 840, 10_045, 4, 3, 2]
    static let messageDigestOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 4]

    /// Receipts are about 4 KiB; anything far larger is not one.
    static let maximumSize = 64 * 1024
    /// Apple's receipts carry leaf, intermediate and root. More would only feed the chain search
    /// (every extra certificate is a candidate issuer: a crafted lattice of them costs minutes).
    static let maximumCertificates = 4
}

extension CMSSignedData {
    package init(berEncoded bytes: [UInt8]) throws {
        guard bytes.count <= Self.maximumSize else {
            throw SignetError(.receiptInvalid, "a receipt of \(bytes.count) bytes is larger than \(Self.maximumSize)")
        }
        do {
            let root = try BER.parse(bytes)
            self = try BER.sequence(root, identifier: .sequence) { nodes in
                let contentType = try ASN1ObjectIdentifier(berEncoded: &nodes)
                guard contentType == Self.signedDataOID else {
                    throw SignetError(.receiptInvalid, "the receipt is not CMS SignedData")
                }
                return try BER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { node in
                    try Self.signedData(node)
                }
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.receiptInvalid, "the receipt does not parse as BER SignedData: \(error)")
        }
    }

    private static func signedData(_ node: ASN1Node) throws -> CMSSignedData {
        try BER.sequence(node, identifier: .sequence) { nodes in
            _ = try Int(berEncoded: &nodes)  // version
            _ = nodes.next()  // digestAlgorithms: the signer names its own
            guard let encapsulatedNode = nodes.next() else {
                throw SignetError(.receiptInvalid, "the signed content is missing")
            }
            let content = try BER.sequence(encapsulatedNode, identifier: .sequence) { encapsulated in
                guard try ASN1ObjectIdentifier(berEncoded: &encapsulated) == dataOID else {
                    throw SignetError(.receiptInvalid, "the signed content is not id-data")
                }
                return try BER.explicitlyTagged(&encapsulated, tagNumber: 0, tagClass: .contextSpecific) {
                    Array(try ASN1OctetString(berEncoded: $0).bytes)
                }
            }
            var certificates: [Certificate] = []
            var next = nodes.next()
            if let node = next, node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                guard case .constructed(let children) = node.content else {
                    throw SignetError(.receiptInvalid, "certificates is not a set")
                }
                for child in children {
                    guard certificates.count < maximumCertificates else {
                        throw SignetError(.receiptInvalid, "a receipt carries at most \(maximumCertificates) certificates")
                    }
                    do {
                        certificates.append(try Certificate(derEncoded: Array(child.encodedBytes)))
                    } catch {
                        throw SignetError(.receiptChainInvalid, "a certificate in the receipt does not parse: \(error)")
                    }
                }
                next = nodes.next()
            }
            if let node = next, node.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific) {
                next = nodes.next()  // crls: unused
            }
            guard let signerInfos = next else { throw SignetError(.receiptInvalid, "no signerInfos") }
            let signers = try BER.set(signerInfos, identifier: .set) { (infos: inout ASN1NodeCollection.Iterator) -> [Signer] in
                var signers: [Signer] = []
                while let info = infos.next() { signers.append(try signer(info)) }
                return signers
            }
            guard signers.count == 1, let signer = signers.first else {
                throw SignetError(.receiptInvalid, "a receipt has exactly one signer, this one has \(signers.count)")
            }
            return CMSSignedData(content: content, certificates: certificates, signer: signer)
        }
    }

    private static func signer(_ node: ASN1Node) throws -> Signer {
        try BER.sequence(node, identifier: .sequence) { nodes in
            guard try Int(berEncoded: &nodes) == 1 else {
                throw SignetError(.receiptInvalid, "the signer is not identified by issuer and serial number")
            }
            guard let sidNode = nodes.next() else { throw SignetError(.receiptInvalid, "the signer id is missing") }
            let (issuer, serial) = try BER.sequence(sidNode, identifier: .sequence) { sid in
                guard let issuerNode = sid.next() else { throw SignetError(.receiptInvalid, "the signer's issuer is missing") }
                let issuer = try DistinguishedName(derEncoded: issuerNode)
                guard let serialNode = sid.next(), serialNode.identifier == .integer,
                    case .primitive(let serial) = serialNode.content
                else { throw SignetError(.receiptInvalid, "the signer's serial number is missing") }
                return (issuer, serial)
            }
            guard try algorithm(nodes.next()) == sha256OID else {
                throw SignetError(.receiptInvalid, "the receipt's digest algorithm is not SHA-256")
            }
            var element = nodes.next()
            var attributes: [UInt8]?
            var messageDigest: [UInt8]?
            if let node = element, node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                // RFC 5652 §5.4: the signature covers the attributes' DER with the SET tag, not [0].
                guard case .constructed(let children) = node.content else {
                    throw SignetError(.receiptInvalid, "signed attributes are not a set")
                }
                var serializer = DER.Serializer()
                serializer.appendConstructedNode(identifier: .set) { set in
                    for child in children { set.serializeRawBytes(child.encodedBytes) }
                }
                attributes = serializer.serializedBytes
                messageDigest = try Self.messageDigest(in: children)
                element = nodes.next()
            }
            guard try algorithm(element) == ecdsaWithSHA256OID else {
                throw SignetError(.receiptInvalid, "the receipt is not signed with ECDSA and SHA-256")
            }
            guard let signatureNode = nodes.next() else { throw SignetError(.receiptInvalid, "no signature") }
            let signature = Array(try ASN1OctetString(berEncoded: signatureNode).bytes)
            return Signer(
                issuer: issuer,
                serialNumber: serial,
                signedAttributes: attributes,
                messageDigest: messageDigest,
                signature: signature
            )
        }
    }

    /// An `AlgorithmIdentifier`'s OID (parameters, absent or NULL, are not used by these algorithms).
    private static func algorithm(_ node: ASN1Node?) throws -> ASN1ObjectIdentifier {
        guard let node else { throw SignetError(.receiptInvalid, "an algorithm identifier is missing") }
        return try BER.sequence(node, identifier: .sequence) { nodes in
            let oid = try ASN1ObjectIdentifier(berEncoded: &nodes)
            _ = nodes.next()
            return oid
        }
    }

    private static func messageDigest(in attributes: ASN1NodeCollection) throws -> [UInt8]? {
        for attribute in attributes {
            let digest = try BER.sequence(attribute, identifier: .sequence) { nodes -> [UInt8]? in
                let oid = try ASN1ObjectIdentifier(berEncoded: &nodes)
                let values = nodes.next()
                guard oid == messageDigestOID, let values else { return nil }
                return try BER.set(values, identifier: .set) { values in
                    guard let value = values.next(), values.next() == nil else {
                        throw SignetError(.receiptInvalid, "messageDigest holds other than one value")
                    }
                    return Array(try ASN1OctetString(berEncoded: value).bytes)
                }
            }
            if let digest { return digest }
        }
        return nil
    }
}
