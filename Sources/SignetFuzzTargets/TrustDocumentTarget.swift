// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetTrust

extension FuzzTarget {
    /// A trust document's claims (the input: the JSON a signer writes), signed with this target's
    /// Ed25519 key as a compact JWS and verified as the SDK and the gateway verify it.
    static let trustDocument = FuzzTarget(
        "trust-document",
        property: "a document that verifies is unexpired, re-encodes to claims that read the same, and its pin sets and OHTTP keys read or are refused as trust_document_invalid",
        seeds: { _ in
            let document = TrustDocument(
                issuer: "signet-trust", issuedAt: now.addingTimeInterval(-60), expires: now.addingTimeInterval(86_400), version: 3,
                pinSets: [
                    PinSetClaim(
                        host: "**.example.com", pins: ["sha256/" + Base64.encode([UInt8](repeating: 1, count: 32)), "sha256/" + Base64.encode([UInt8](repeating: 2, count: 32))],
                        mode: "enforce", hardExpiry: now.addingTimeInterval(3600), hardExpiryBehaviour: "report-only")
                ],
                responseKeys: ["r1": "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n"])
            return [Array(try claimsEncoder.encode(document))]
        },
        check: { bytes in
            let signingInput = Base64.urlEncode(Array(#"{"alg":"EdDSA","kid":"t1"}"#.utf8)) + "." + Base64.urlEncode(bytes)
            let signature = try trustKey.signature(for: Array(signingInput.utf8))
            let jws = signingInput + "." + Base64.urlEncode(Array(signature))
            let keys = try blocking { try await TrustKeys(publicKeys: ["t1": trustPublicKeyPEM]) }
            let document: TrustDocument
            do {
                document = try blocking { try await keys.verify(jws, now: now) }
            } catch let error as SignetError {
                try expect(
                    [.trustDocumentInvalid, .trustDocumentExpired].contains(error.code),
                    "a signed document was refused with \(error.code), not a trust document code")
                return
            }
            try expect(now < document.expires, "a document that expired at \(document.expires) verified at \(now)")
            let written = String(decoding: try claimsEncoder.encode(document), as: UTF8.self)
            let again = try reparsed(written) { try claimsDecoder.decode(TrustDocument.self, from: Data($0.utf8)) }
            try expect(again == document, "the claims of \(document) re-encode to \(written), which read as \(again)")
            for read in [{ _ = try document.pinSetValues() }, { _ = try document.ohttpKeyConfigurations() }] {
                do { try read() } catch let error as SignetError {
                    try expect(error.code == .trustDocumentInvalid, "a part of a verified document was refused with \(error.code)")
                }
            }
        }
    )
}

private let now = Date(timeIntervalSince1970: 1_790_000_000)
private let trustKey = try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x42, count: 32))
private let trustPublicKeyPEM = (try! VerificationKey(ed25519Raw: trustKey.publicKey.rawRepresentation)).pemRepresentation!

/// JWT claims' encoding: NumericDate seconds, as jwt-kit writes and reads them.
private let claimsEncoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .secondsSince1970
    encoder.outputFormatting = .sortedKeys
    return encoder
}()
private let claimsDecoder: JSONDecoder = {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .secondsSince1970
    return decoder
}()
