// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// A verified App Attest attestation: the key the server may trust from now on.
public struct VerifiedAttestation: Sendable {
    /// SHA256 of the 65-byte public point, standard base64 with padding (what the device calls keyId).
    public var keyID: String
    public var publicKey: VerificationKey
    public var environment: AppAttestPolicy.Environment
    public var appID: String
    /// The receipt, kept for later fraud-risk checks with Apple.
    public var receipt: [UInt8]
    /// The leaf certificate's notAfter: App Attest leaves can live only a few days, hence the check
    /// at receipt time and the stored result.
    public var leafNotAfter: Date
}

/// Verifies attestation objects with Apple's steps (Validating apps that connect to your server).
public struct AppAttestAttestationVerifier: Sendable {
    public var policy: AppAttestPolicy

    static let nonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]
    static let productionAAGUID = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
    static let developmentAAGUID = Array("appattestdevelop".utf8)

    public init(policy: AppAttestPolicy) {
        self.policy = policy
    }

    /// Verifies `attestation` (CBOR) for `keyID` (standard base64) and `challenge` at `time`.
    public func verify(attestation: [UInt8], keyID: String, challenge: [UInt8], at time: Date) async throws
        -> VerifiedAttestation
    {
        let object = try CBORDecoder().decode(attestation)
        guard object[text: "fmt"] == .text("apple-appattest"), let statement = object[text: "attStmt"],
            let authDataBytes = object[text: "authData"]?.bytes,
            case .array(let chain)? = statement[text: "x5c"], chain.count >= 2,
            let receipt = statement[text: "receipt"]?.bytes
        else { throw SignetError(.malformedCBOR, "not an apple-appattest attestation object") }
        let certificates: [Certificate]
        do {
            certificates = try chain.map { value in
                guard let der = value.bytes else { throw SignetError(.malformedCBOR, "x5c holds a non-byte-string") }
                return try Certificate(derEncoded: der)
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.attestationChainInvalid, "a certificate in x5c does not parse: \(error)")
        }
        let leaf = certificates[0]

        // Step 1: the chain ends at the pinned root and every certificate is valid at `time`.
        var verifier = Verifier(rootCertificates: CertificateStore(policy.roots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
        }
        let result = await verifier.validate(
            leaf: leaf,
            intermediates: CertificateStore(Array(certificates.dropFirst()))
        )
        guard case .validCertificate = result else {
            throw SignetError(
                .attestationChainInvalid,
                "the certificate chain does not lead to the App Attest root at \(time)"
            )
        }

        // Steps 2-4: the leaf's nonce extension is SHA256(authData ‖ clientDataHash).
        let clientDataHash = policy.clientDataHash == .rawChallenge ? challenge : Array(SHA256.hash(data: challenge))
        let expectedNonce = Array(SHA256.hash(data: authDataBytes + clientDataHash))
        guard let nonce = try Self.nonce(in: leaf), ConstantTime.equals(nonce, expectedNonce) else {
            throw SignetError(.attestationNonceMismatch, "the certificate's nonce does not match this challenge")
        }

        // Step 5: keyId is SHA256 of the leaf's public point.
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw SignetError(.attestationChainInvalid, "the leaf key is not P-256")
        }
        let point = Array(leafKey.x963Representation)
        let computedKeyID = Array(SHA256.hash(data: point))
        guard let givenKeyID = Base64.decode(keyID) ?? Base64.urlDecode(keyID),
            ConstantTime.equals(givenKeyID, computedKeyID)
        else {
            throw SignetError(.attestationKeyMismatch, "keyId is not the hash of the attested key")
        }

        // Steps 6-9: rpIdHash, counter, environment, credential id, and the COSE key itself.
        let authData = try AuthenticatorData(authDataBytes)
        guard
            let appID = policy.appIDs.first(where: {
                ConstantTime.equals(Array(SHA256.hash(data: Array($0.utf8))), authData.rpIDHash)
            })
        else { throw SignetError(.appIDMismatch, "the attestation is for another App ID") }
        guard authData.signCount == 0 else {
            throw SignetError(.counterNotIncreasing, "an attestation's counter must be 0")
        }
        let environment: AppAttestPolicy.Environment
        switch authData.aaguid {
        case Self.productionAAGUID?: environment = .production
        case Self.developmentAAGUID?: environment = .development
        default: throw SignetError(.environmentMismatch, "unknown App Attest AAGUID")
        }
        guard environment == .production || policy.allowDevelopment else {
            throw SignetError(.environmentMismatch, "development keys are not accepted")
        }
        guard authData.credentialID == computedKeyID else {
            throw SignetError(.attestationKeyMismatch, "the credential id is not the key id")
        }
        guard let cose = authData.credentialPublicKey, try COSEKey.p256Point(cose) == point else {
            throw SignetError(.attestationKeyMismatch, "the COSE key is not the certificate's key")
        }
        return VerifiedAttestation(
            keyID: Base64.encode(computedKeyID),
            publicKey: try VerificationKey(p256X963: point),
            environment: environment,
            appID: appID,
            receipt: receipt,
            leafNotAfter: leaf.notValidAfter
        )
    }

    /// The 32 bytes of the nonce extension: `SEQUENCE { [1] EXPLICIT OCTET STRING }`, parsed strictly.
    static func nonce(in certificate: Certificate) throws -> [UInt8]? {
        guard let extensionValue = certificate.extensions[oid: nonceExtension]?.value else { return nil }
        return try nonce(extensionValue: Array(extensionValue))
    }

    static func nonce(extensionValue: [UInt8]) throws -> [UInt8] {
        do {
            let root = try DER.parse(extensionValue)
            return try DER.sequence(root, identifier: .sequence) { nodes in
                guard let tagged = nodes.next() else {
                    throw SignetError(.attestationNonceMismatch, "empty nonce extension")
                }
                return try DER.explicitlyTagged(tagged, tagNumber: 1, tagClass: .contextSpecific) { node in
                    let octets = try ASN1OctetString(derEncoded: node)
                    guard octets.bytes.count == 32 else {
                        throw SignetError(.attestationNonceMismatch, "the nonce is not 32 bytes")
                    }
                    return Array(octets.bytes)
                }
            }
        } catch let error as SignetError {
            throw error
        } catch {
            throw SignetError(.attestationNonceMismatch, "the nonce extension does not parse: \(error)")
        }
    }
}

extension SignetError.Code {
    /// The key id, credential id and attested key do not agree.
    public static let attestationKeyMismatch = Self("attestation_key_mismatch")
}
