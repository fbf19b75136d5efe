// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetSimulator
import SwiftASN1
import Testing
import X509

@testable import SignetAppAttest

/// The receipts inside the real attestations (`Tests/Vectors/appattest`), verified against Apple Root
/// CA - G3 at their dates, and every mutation refused with its reason.
@Suite struct AppAttestReceiptTests {
    typealias Fixture = AppAttestFixtureTests.Fixture

    /// What the independent check (Python `asn1crypto` + `cryptography`) read from each receipt.
    static let expected: [String: (created: String, expires: String, environment: String)] = [
        "bas-d-appattest_attestation_development.json": (
            "2021-04-15T09:55:20.207Z", "2021-07-14T09:55:20.207Z", "sandbox"
        ),
        "dreipol-pyattest_attestation_development.json": (
            "2021-01-25T09:24:12.760Z", "2021-04-25T09:24:12.760Z", "sandbox"
        ),
        "uebelack-node-app-attest_attestation_development.json": (
            "2024-02-04T20:27:06.193Z", "2024-05-04T20:27:06.193Z", "sandbox"
        ),
        "uebelack-node-app-attest_attestation_production.json": (
            "2024-02-07T21:08:56.308Z", "2024-05-07T21:08:56.308Z", "production"
        ),
        "veehaitch-devicecheck-appattest_attestation_ios14.4_development.json": (
            "2021-01-23T12:13:35.801Z", "2021-04-23T12:13:35.801Z", "sandbox"
        ),
        "webauthn4j_attestation_production.json": (
            "2020-09-28T20:28:19.942Z", "2020-12-27T20:28:19.942Z", "production"
        ),
        "apple-docs-2026_attestation_production.json": (
            "2026-04-21T18:13:12.153Z", "2026-07-20T18:13:12.153Z", "production"
        ),
    ]

    static func parts(_ fixture: Fixture) throws -> (receipt: [UInt8], leaf: Certificate) {
        let object = try CBORDecoder().decode(fixture.bytes("attestation_b64"))
        guard let statement = object[text: "attStmt"], let receipt = statement[text: "receipt"]?.bytes,
            case .array(let x5c)? = statement[text: "x5c"], let leaf = x5c.first?.bytes
        else { throw SignetError(.malformedCBOR, "fixture") }
        return (receipt, try Certificate(derEncoded: leaf))
    }

    static func point(_ certificate: Certificate) -> [UInt8] {
        Array(P256.Signing.PublicKey(certificate.publicKey)!.x963Representation)
    }

    static func code(_ body: () async throws -> AppAttestReceipt) async -> String? {
        do {
            _ = try await body()
            return nil
        } catch let error as SignetError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    @Test func everyFixtureHasItsExpectedFields() {
        #expect(Set(Self.expected.keys) == Set(AppAttestFixtureTests.attestations.map(\.name)))
    }

    @Test(arguments: AppAttestFixtureTests.attestations)
    func everyRealReceiptVerifiesAtItsDateWithItsFields(_ fixture: Fixture) async throws {
        let (bytes, leaf) = try Self.parts(fixture)
        let receipt = try await AppAttestReceiptVerifier().verify(
            bytes,
            at: fixture.validAt,
            expecting: .init(
                appIDs: [fixture.json["app_id"]!],
                publicKey: Self.point(leaf),
                clientHash: fixture.clientDataHash
            )
        )
        let expected = try #require(Self.expected[fixture.name])
        #expect(receipt.kind == .attest)
        #expect(receipt.appID == fixture.json["app_id"])
        var leafDER = DER.Serializer()
        try leafDER.serialize(leaf)
        #expect(receipt.attestedCertificate == leafDER.serializedBytes)
        #expect(receipt.environment == expected.environment)
        #expect(receipt.createdAt == AppAttestReceipt.date(expected.created))
        #expect(receipt.expiresAt == AppAttestReceipt.date(expected.expires))
        #expect(receipt.riskMetric == nil)
        #expect(receipt.notBefore == nil)
        #expect(receipt.token.count == 88)
        #expect(receipt.bytes == bytes)
        // Apple's receipts are BER with indefinite lengths: what DER readers refuse.
        #expect(Array(bytes.prefix(2)) == [0x30, 0x80])
        #expect((try? DER.parse(bytes)) == nil)
    }

    @Test(arguments: AppAttestFixtureTests.attestations)
    func everyMutationOfARealReceiptIsRefusedWithItsReason(_ fixture: Fixture) async throws {
        let (bytes, leaf) = try Self.parts(fixture)
        let verifier = try AppAttestReceiptVerifier()
        let at = fixture.validAt
        let expectation = AppAttestReceiptVerifier.Expectation(
            appIDs: [fixture.json["app_id"]!],
            publicKey: Self.point(leaf),
            clientHash: fixture.clientDataHash
        )
        func code(_ receipt: [UInt8], at time: Date? = nil, _ expecting: AppAttestReceiptVerifier.Expectation? = nil)
            async -> String?
        {
            await Self.code { try await verifier.verify(receipt, at: time ?? at, expecting: expecting ?? expectation) }
        }
        let signed = try CMSSignedData(berEncoded: bytes)

        // The signature: its last byte changed (inside the DER integer s).
        let signature = signed.signer.signature
        let sigStart = try #require(Self.range(of: signature, in: bytes))
        var badSignature = bytes
        badSignature[sigStart.upperBound - 1] ^= 0x01
        #expect(await code(badSignature) == "receipt_invalid")
        // The content: one letter of the App ID changed, the signature no longer covers it.
        let appID = Array(fixture.json["app_id"]!.utf8)
        let appStart = try #require(Self.range(of: appID, in: bytes))
        var badContent = bytes
        badContent[appStart.lowerBound + 12] ^= 0x20
        #expect(await code(badContent) == "receipt_invalid")
        // Truncated, and not a receipt at all.
        #expect(await code(Array(bytes.dropLast(40))) == "receipt_invalid")
        #expect(await code(Array(repeating: 0x30, count: 70_000)) == "receipt_invalid")
        #expect(await code(Array("simulated receipt".utf8)) == "receipt_invalid")
        // The chain: another root (Apple's App Attestation root signs attestations, not receipts),
        // and a time after the receipt signer's certificate expired.
        let attestationRoot = try Certificate(pemEncoded: AppleAppAttestationRoot.pem)
        #expect(
            await Self.code {
                try await AppAttestReceiptVerifier(trusting: [attestationRoot]).verify(bytes, at: at, expecting: expectation)
            } == "receipt_chain_invalid"
        )
        let signerNotAfter = signed.certificates[0].notValidAfter
        #expect(await code(bytes, at: signerNotAfter.addingTimeInterval(86_400)) == "receipt_chain_invalid")
        // The binding: another app, another key, another attestation's client hash.
        #expect(await code(bytes, .init(appIDs: ["ABCDE12345.com.example.other"])) == "app_id_mismatch")
        let other = try AppAttestFixtureTests.attestations.first { $0.name != fixture.name }.map(Self.parts)!
        #expect(await code(bytes, .init(publicKey: Self.point(other.leaf))) == "attestation_key_mismatch")
        #expect(await code(bytes, .init(clientHash: Array(SHA256.hash(data: [0x21])))) == "attestation_key_mismatch")
        // The dates: before its creation; after its expiry (where the signer's certificate still is valid).
        let receipt = try await verifier.verify(bytes, at: at)
        #expect(await code(bytes, at: receipt.createdAt.addingTimeInterval(-3_600)) == "receipt_not_yet_valid")
        let afterExpiry = receipt.expiresAt.addingTimeInterval(1)
        #expect(
            await code(bytes, at: afterExpiry)
                == (afterExpiry < signerNotAfter ? "receipt_expired" : "receipt_chain_invalid")
        )
        #expect(await code(bytes, .init(maximumAge: 300)) == nil)
        #expect(await code(bytes, at: receipt.createdAt.addingTimeInterval(301), .init(maximumAge: 300)) == "receipt_stale")
    }

    /// webauthn4j's 2020 receipt carries signed attributes yet signs the content; the expiry is
    /// reachable there while the signer's certificate is still valid.
    @Test func theReceiptWithSignedAttributesExpires() async throws {
        let fixture = try #require(AppAttestFixtureTests.attestations.first { $0.name.hasPrefix("webauthn4j") })
        let (bytes, _) = try Self.parts(fixture)
        let signed = try CMSSignedData(berEncoded: bytes)
        #expect(signed.signer.signedAttributes != nil)
        #expect(signed.signer.messageDigest == Array(SHA256.hash(data: signed.content)))
        let at = try #require(AppAttestReceipt.date("2021-01-05T00:00:00Z"))
        #expect(await Self.code { try await AppAttestReceiptVerifier().verify(bytes, at: at) } == "receipt_expired")
    }

    // MARK: The simulator's receipts: the layout round-trips, and the marker extension is required.

    @Test func simulatedReceiptsVerifyBothWaysOfSigning() async throws {
        let ca = try DevelopmentAttestationCA()
        let now = Date()
        let fields = AppAttestReceipt(
            appID: "ABCDE12345.com.example.app",
            attestedCertificate: [0x30, 0x00],
            clientHash: Array(repeating: 7, count: 32),
            token: Array("token".utf8),
            kind: .receipt,
            environment: "sandbox",
            createdAt: now,
            riskMetric: 3,
            notBefore: now.addingTimeInterval(86_400),
            expiresAt: now.addingTimeInterval(90 * 86_400)
        )
        for signedAttributes in [false, true] {
            let bytes = try ca.receiptSigner.receipt(fields, signedAttributes: signedAttributes)
            let receipt = try await AppAttestReceiptVerifier(trusting: [ca.root]).verify(bytes, at: now)
            #expect(receipt.riskMetric == 3)
            #expect(receipt.kind == .receipt)
            #expect(receipt.notBefore != nil)
            #expect(abs(receipt.createdAt.timeIntervalSince(now)) < 0.001)
        }
        // Apple's carry three certificates; a pile of candidate issuers is refused before any chain search.
        let crowded = try ca.receiptSigner.receipt(fields, extraCertificates: [ca.root, ca.intermediate, ca.root])
        #expect(
            await Self.code { try await AppAttestReceiptVerifier(trusting: [ca.root]).verify(crowded, at: now) }
                == "receipt_invalid"
        )
        let four = try ca.receiptSigner.receipt(fields, extraCertificates: [ca.root, ca.intermediate])
        #expect(await Self.code { try await AppAttestReceiptVerifier(trusting: [ca.root]).verify(four, at: now) } == nil)
        let unmarked = try DevelopmentAttestationCA(receiptSigningExtension: false)
        let forged = try unmarked.receiptSigner.receipt(fields)
        #expect(
            await Self.code { try await AppAttestReceiptVerifier(trusting: [unmarked.root]).verify(forged, at: now) }
                == "receipt_chain_invalid"
        )
    }

    static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where Array(haystack[start..<start + needle.count]) == needle {
            return start..<start + needle.count
        }
        return nil
    }
}
