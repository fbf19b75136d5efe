// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SwiftASN1
import Testing
import X509

@testable import SignetAppAttest

/// Real devices' attestations and assertions (`Tests/Vectors/appattest`), and their mutations.
@Suite struct AppAttestFixtureTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/appattest")

    struct Fixture: CustomTestStringConvertible, Sendable {
        let name: String
        let json: [String: String]
        let challenge: [UInt8]
        var testDescription: String { name }
        func bytes(_ key: String) -> [UInt8] {
            let text = json[key] ?? ""
            return Base64.decode(text) ?? Base64.urlDecode(text) ?? []
        }
        var validAt: Date {
            ISO8601DateFormatter().date(from: json["valid_at"] ?? "") ?? Date(timeIntervalSince1970: 0)
        }
        var development: Bool { json["environment"] == "development" }
        /// Apple's own sample passes the challenge's bytes as `clientDataHash`, not their SHA-256.
        var raw: Bool { json["client_data_hash"] == "raw" }
        var clientDataHash: [UInt8] { raw ? challenge : Array(SHA256.hash(data: challenge)) }
    }

    static func load(_ kind: String) -> [Fixture] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") && $0.contains("_\(kind)") }.sorted().compactMap { name in
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            var strings: [String: String] = [:]
            for (key, value) in object {
                if let text = value as? String {
                    strings[key] = text
                } else if let number = value as? NSNumber {
                    strings[key] = number.stringValue
                }
            }
            let challenge = (object["challenge"] as? [String: Any])?["bytes_b64"] as? String
            return Fixture(name: name, json: strings, challenge: challenge.flatMap(Base64.decode) ?? [])
        }
    }

    static let attestations = load("attestation")
    static let assertions = load("assertion")

    static func verifier(
        _ fixture: Fixture,
        appID: String? = nil,
        development: Bool? = nil,
        raw: Bool? = nil,
        roots: [Certificate]? = nil,
        appBuild: AppBuildPolicy? = nil
    ) throws
        -> AppAttestAttestationVerifier
    {
        AppAttestAttestationVerifier(
            policy: try AppAttestPolicy(
                appIDs: [appID ?? fixture.json["app_id"]!],
                allowDevelopment: development ?? fixture.development,
                clientDataHash: raw ?? fixture.raw ? .rawChallenge : .sha256OfChallenge,
                roots: roots,
                appBuild: appBuild
            )
        )
    }

    /// Fixtures that failed to load would make the tables below run no case at all.
    @Test func everyRealFixtureIsLoaded() {
        #expect(Self.attestations.count == 7)
        #expect(Self.assertions.count == 4)
    }

    @Test(arguments: attestations)
    func everyRealAttestationVerifiesAtItsTime(_ fixture: Fixture) async throws {
        let verified = try await Self.verifier(fixture).verify(
            attestation: fixture.bytes("attestation_b64"),
            keyID: fixture.json["key_id_b64"]!,
            challenge: fixture.challenge,
            at: fixture.validAt
        )
        #expect(verified.environment.rawValue == fixture.json["environment"])
        #expect(verified.appID == fixture.json["app_id"])
        #expect(Base64.decode(verified.keyID) == fixture.bytes("key_id_b64"))
        // Step 10: the receipt is Apple's, for this app, key and client data hash.
        #expect(verified.receipt.kind == .attest)
        #expect(verified.receipt.appID == fixture.json["app_id"])
        #expect(verified.receipt.clientHash == fixture.clientDataHash)
        if let version = fixture.json["expected_ios_version"] {
            #expect(verified.osVersion == version)
        }
        // iOS 27 declares the app build; every earlier fixture declares none.
        #expect(verified.appBuild.category?.rawValue == fixture.json["expected_validation_category"].flatMap { UInt32($0) })
        #expect(verified.appBuild.bundleVersion == fixture.json["expected_bundle_version"])
        if let pem = fixture.json["expected_public_key_pem"] {
            #expect(verified.publicKey.jwk == (try VerificationKey(pem: pem)).jwk)
        }
    }

    @Test(arguments: attestations)
    func everyMutationOfAnAttestationIsRejectedWithItsReason(_ fixture: Fixture) async throws {
        let attestation = fixture.bytes("attestation_b64")
        let keyID = fixture.json["key_id_b64"]!
        func code(
            _ verifier: AppAttestAttestationVerifier,
            attestation: [UInt8]? = nil,
            keyID: String? = nil,
            challenge: [UInt8]? = nil,
            at: Date? = nil
        ) async -> String? {
            do {
                _ = try await verifier.verify(
                    attestation: attestation ?? fixture.bytes("attestation_b64"),
                    keyID: keyID ?? fixture.json["key_id_b64"]!,
                    challenge: challenge ?? fixture.challenge,
                    at: at ?? fixture.validAt
                )
                return nil
            } catch let error as SignetError {
                return error.code.rawValue
            } catch {
                return "\(error)"
            }
        }
        let verifier = try Self.verifier(fixture)
        #expect(await code(verifier, challenge: fixture.challenge + [0x21]) == "attestation_nonce_mismatch")
        #expect(await code(try Self.verifier(fixture, raw: !fixture.raw)) == "attestation_nonce_mismatch")
        #expect(await code(try Self.verifier(fixture, appID: "ABCDE12345.com.example.other")) == "app_id_mismatch")
        if fixture.development {
            #expect(await code(try Self.verifier(fixture, development: false)) == "environment_mismatch")
        }
        #expect(
            await code(verifier, at: fixture.validAt.addingTimeInterval(400 * 86_400)) == "attestation_chain_invalid"
        )
        let otherRoot = try Certificate(
            pemEncoded: String(
                decoding: try Data(contentsOf: Self.folder.appendingPathComponent("Apple_Root_CA_G3.pem")),
                as: UTF8.self
            )
        )
        #expect(await code(try Self.verifier(fixture, roots: [otherRoot])) == "attestation_chain_invalid")
        #expect(await code(verifier, attestation: Array(attestation.dropLast())) == "malformed_cbor")
        #expect(await code(verifier, attestation: attestation + [0x00]) == "malformed_cbor")
        var otherKey = Base64.decode(keyID) ?? Base64.urlDecode(keyID)!
        otherKey[0] ^= 1
        #expect(await code(verifier, keyID: Base64.encode(otherKey)) == "attestation_key_mismatch")
    }

    @Test(arguments: assertions)
    func everyRealAssertionVerifiesWithItsKeyAndCounter(_ fixture: Fixture) throws {
        let key = try VerificationKey(pem: fixture.json["public_key_pem"]!)
        let verifier = AppAttestAssertionVerifier(appIDs: [fixture.json["app_id"]!])
        let clientData = fixture.bytes("client_data_b64")
        let previous = UInt32(fixture.json["previous_counter"] ?? "0") ?? 0
        let counter = try verifier.verify(
            assertion: fixture.bytes("assertion_b64"),
            clientData: clientData,
            publicKey: key,
            previousCounter: previous
        )
        #expect(counter == UInt32(fixture.json["expected_counter"] ?? ""))

        func code(_ body: () throws -> Void) -> String? {
            do { try body(); return nil } catch let error as SignetError { return error.code.rawValue } catch {
                return "\(error)"
            }
        }
        #expect(
            code {
                _ = try verifier.verify(
                    assertion: fixture.bytes("assertion_b64"),
                    clientData: clientData + [0x20],
                    publicKey: key
                )
            } == "signature_invalid"
        )
        #expect(
            code {
                _ = try verifier.verify(
                    assertion: fixture.bytes("assertion_b64"),
                    clientData: clientData,
                    publicKey: key,
                    previousCounter: counter
                )
            } == "counter_not_increasing"
        )
        #expect(
            code {
                _ = try AppAttestAssertionVerifier(appIDs: ["X.other"]).verify(
                    assertion: fixture.bytes("assertion_b64"),
                    clientData: clientData,
                    publicKey: key
                )
            } == "app_id_mismatch"
        )
        #expect(
            code {
                _ = try verifier.verify(
                    assertion: Array(fixture.bytes("assertion_b64").dropLast()),
                    clientData: clientData,
                    publicKey: key
                )
            } == "malformed_cbor"
        )
        // As an RFC 9421 algorithm the counter comes back for the store's compare-and-set.
        let evidence = try AppAttestAlgorithm(appIDs: [fixture.json["app_id"]!]).verify(
            fixture.bytes("assertion_b64"),
            over: clientData,
            with: key
        )
        #expect(evidence.counter == UInt64(counter))
    }

    @Test func theNonceExtensionIsParsedStrictly() throws {
        let nonce = [UInt8](repeating: 7, count: 32)
        let good: [UInt8] = [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce
        #expect(try AppAttestAttestationVerifier.nonce(extensionValue: good) == nonce)
        let bad: [[UInt8]] = [
            good + [0x00],  // trailing bytes
            [0x30, 0x25, 0xA1, 0x23, 0x04, 0x21] + nonce + [0x00],  // 33-byte nonce
            [0x30, 0x24, 0xA2, 0x22, 0x04, 0x20] + nonce,  // wrong tag
            [0x30, 0x26, 0xA1, 0x22, 0x04, 0x20] + nonce + [0x05, 0x00],  // extra element
        ]
        for value in bad {
            let error = #expect(throws: SignetError.self) {
                try AppAttestAttestationVerifier.nonce(extensionValue: value)
            }
            #expect(error?.code == .attestationNonceMismatch)
        }
    }
}
