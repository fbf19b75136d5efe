// SPDX-License-Identifier: Apache-2.0
import Crypto
import SwiftASN1
import _CryptoExtras

/// Reads keys from PEM or DER: SPKI (`PUBLIC KEY`), PKCS#8 (`PRIVATE KEY`), SEC1
/// (`EC PRIVATE KEY`) and PKCS#1 (`RSA PUBLIC KEY`, `RSA PRIVATE KEY`), for P-256, P-384, Ed25519
/// and RSA, including RSA keys labelled with the RSASSA-PSS OID (RFC 9421's `test-key-rsa-pss`).
enum PEMKeyDecoder {
    enum Decoded {
        case publicKey(VerificationKey)
        case privateKey(SigningKey)
    }

    static func decode(pem: String) throws -> Decoded {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: pem)
        } catch {
            throw SignetError(.invalidKey, "not a PEM document")
        }
        guard let document = documents.first(where: { $0.discriminator.hasSuffix("KEY") }) else {
            throw SignetError(.invalidKey, "the PEM holds no key block")
        }
        return try decode(der: document.derBytes, label: document.discriminator)
    }

    static func decode(der: [UInt8], label: String) throws -> Decoded {
        do {
            switch label {
            case "PUBLIC KEY": return .publicKey(try publicKey(spki: der))
            case "PRIVATE KEY": return .privateKey(try privateKey(pkcs8: der))
            case "EC PRIVATE KEY": return .privateKey(try sec1PrivateKey(der))
            case "RSA PUBLIC KEY":
                return .publicKey(VerificationKey(.rsa(try _RSA.Signing.PublicKey(derRepresentation: der))))
            case "RSA PRIVATE KEY":
                return .privateKey(SigningKey(.rsa(try _RSA.Signing.PrivateKey(derRepresentation: der))))
            default: throw SignetError(.invalidKey, "unsupported PEM block \(label.debugDescription)")
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.invalidKey, "cannot read the \(label) block: \(error)")
        }
    }

    // MARK: SubjectPublicKeyInfo

    static func publicKey(spki der: [UInt8]) throws -> VerificationKey {
        let (algorithm, parameters, key) = try DER.sequence(try DER.parse(der), identifier: .sequence) { nodes in
            let (algorithm, parameters) = try algorithmIdentifier(&nodes)
            let key = try ASN1BitString(derEncoded: &nodes)
            return (algorithm, parameters, key)
        }
        switch algorithm {
        case OID.ecPublicKey:
            switch try curve(parameters) {
            case .p256: return VerificationKey(.p256(try P256.Signing.PublicKey(derRepresentation: der)))
            default: return VerificationKey(.p384(try P384.Signing.PublicKey(derRepresentation: der)))
            }
        case OID.ed25519:
            return try VerificationKey(ed25519Raw: key.bytes)
        case OID.rsaEncryption:
            return VerificationKey(.rsa(try _RSA.Signing.PublicKey(derRepresentation: der)))
        case OID.rsassaPSS:
            // BoringSSL reads only rsaEncryption SPKIs; the PSS form wraps the same PKCS#1 key.
            return VerificationKey(.rsa(try _RSA.Signing.PublicKey(derRepresentation: Array(key.bytes))))
        default:
            throw SignetError(.invalidKey, "unsupported public key algorithm \(algorithm)")
        }
    }

    // MARK: Private keys

    static func privateKey(pkcs8 der: [UInt8]) throws -> SigningKey {
        let (algorithm, parameters, inner) = try DER.sequence(try DER.parse(der), identifier: .sequence) { nodes in
            _ = try Int(derEncoded: &nodes)  // version
            let (algorithm, parameters) = try algorithmIdentifier(&nodes)
            let inner = try ASN1OctetString(derEncoded: &nodes)
            while nodes.next() != nil {}  // optional attributes and public key
            return (algorithm, parameters, inner)
        }
        switch algorithm {
        case OID.ecPublicKey:
            switch try curve(parameters) {
            case .p256: return SigningKey(.p256(try P256.Signing.PrivateKey(derRepresentation: der)))
            default: return SigningKey(.p384(try P384.Signing.PrivateKey(derRepresentation: der)))
            }
        case OID.ed25519:
            // CurvePrivateKey ::= OCTET STRING (RFC 8410 §7).
            let seed = try ASN1OctetString(derEncoded: inner.bytes)
            return SigningKey(.ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: seed.bytes)))
        case OID.rsaEncryption, OID.rsassaPSS:
            return SigningKey(.rsa(try _RSA.Signing.PrivateKey(derRepresentation: Array(inner.bytes))))
        default:
            throw SignetError(.invalidKey, "unsupported private key algorithm \(algorithm)")
        }
    }

    private static func sec1PrivateKey(_ der: [UInt8]) throws -> SigningKey {
        // ECPrivateKey ::= SEQUENCE { version, privateKey OCTET STRING, [0] parameters, [1] publicKey }
        let length = try DER.sequence(try DER.parse(der), identifier: .sequence) { nodes in
            _ = try Int(derEncoded: &nodes)
            let key = try ASN1OctetString(derEncoded: &nodes)
            while nodes.next() != nil {}
            return key.bytes.count
        }
        switch length {
        case 32: return SigningKey(.p256(try P256.Signing.PrivateKey(derRepresentation: der)))
        case 48: return SigningKey(.p384(try P384.Signing.PrivateKey(derRepresentation: der)))
        default: throw SignetError(.invalidKey, "unsupported EC private key size \(length)")
        }
    }

    // MARK: Helpers

    private static func algorithmIdentifier(
        _ nodes: inout ASN1NodeCollection.Iterator
    ) throws -> (ASN1ObjectIdentifier, ASN1Any?) {
        guard let node = nodes.next() else { throw SignetError(.invalidKey, "missing AlgorithmIdentifier") }
        return try DER.sequence(node, identifier: .sequence) { inner in
            let oid = try ASN1ObjectIdentifier(derEncoded: &inner)
            let parameters = inner.next().map(ASN1Any.init(derEncoded:))
            return (oid, parameters)
        }
    }

    private static func curve(_ parameters: ASN1Any?) throws -> KeyType {
        guard let parameters, let oid = try? ASN1ObjectIdentifier(asn1Any: parameters) else {
            throw SignetError(.invalidKey, "EC key without a named curve")
        }
        switch oid {
        case OID.prime256v1: return .p256
        case OID.secp384r1: return .p384
        default: throw SignetError(.invalidKey, "unsupported curve \(oid)")
        }
    }

    enum OID {
        static let ecPublicKey: ASN1ObjectIdentifier = [1, 2, 840, 10045, 2, 1]
        static let prime256v1: ASN1ObjectIdentifier = [1, 2, 840, 10045, 3, 1, 7]
        static let secp384r1: ASN1ObjectIdentifier = [1, 3, 132, 0, 34]
        static let ed25519: ASN1ObjectIdentifier = [1, 3, 101, 112]
        static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]
        static let rsassaPSS: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 10]
    }
}

extension SigningKey {
    /// A private key from PEM: PKCS#8, SEC1 or PKCS#1.
    public init(pem: String) throws {
        guard case .privateKey(let key) = try PEMKeyDecoder.decode(pem: pem) else {
            throw SignetError(.invalidKey, "the PEM holds a public key, a private key is needed to sign")
        }
        self = key
    }

    /// PKCS#8 PEM of the private key; `nil` for an HMAC secret.
    public var pemRepresentation: String? {
        switch storage {
        case .symmetric: nil
        case .p256(let key): key.pemRepresentation
        case .p384(let key): key.pemRepresentation
        case .ed25519(let key): key.pemRepresentation
        case .rsa(let key): key.pkcs8PEMRepresentation
        }
    }
}

extension VerificationKey {
    /// A public key from PEM (SPKI or PKCS#1); a private-key PEM yields its public key.
    public init(pem: String) throws {
        switch try PEMKeyDecoder.decode(pem: pem) {
        case .publicKey(let key): self = key
        case .privateKey(let key): self = key.verificationKey
        }
    }

    /// A public key from SubjectPublicKeyInfo DER.
    public init(spkiDER: [UInt8]) throws {
        do {
            self = try PEMKeyDecoder.publicKey(spki: spkiDER)
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.invalidKey, "cannot read the SubjectPublicKeyInfo: \(error)")
        }
    }

    /// SPKI PEM of the public key; `nil` for an HMAC secret.
    public var pemRepresentation: String? {
        switch storage {
        case .symmetric: nil
        case .p256(let key): key.pemRepresentation
        case .p384(let key): key.pemRepresentation
        case .ed25519(let key): key.pemRepresentation
        case .rsa(let key): key.pemRepresentation
        }
    }
}
