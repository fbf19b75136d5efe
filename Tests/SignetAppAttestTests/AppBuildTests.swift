// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetSimulator
import SignetTestSupport
import Testing

@testable import SignetAppAttest

/// iOS 27's app build in App Attest objects: Apple's 2026 sample, assertions written by an
/// independent encoder (Python's cbor2 and cryptography), the simulator, and every malformed shape.
@Suite struct AppBuildTests {
    static let apple = AppAttestFixtureTests.attestations.first { $0.name.hasPrefix("apple-docs-2026") }!
    static let older = AppAttestFixtureTests.attestations.first { $0.name.hasPrefix("webauthn4j") }!

    static func code(_ fixture: AppAttestFixtureTests.Fixture, _ policy: AppBuildPolicy) async throws -> String? {
        do {
            _ = try await AppAttestFixtureTests.verifier(fixture, appBuild: policy).verify(
                attestation: fixture.bytes("attestation_b64"),
                keyID: fixture.json["key_id_b64"]!,
                challenge: fixture.challenge,
                at: fixture.validAt
            )
            return nil
        } catch let error as SignetError {
            return error.code.rawValue
        }
    }

    /// Apple's sample declares category 1 (platform) and bundle version "1": a registration policy
    /// judges both, after everything Apple signed verified.
    @Test func applesSampleIsJudgedByARegistrationPolicy() async throws {
        let sample = Self.apple
        #expect(try await Self.code(sample, AppBuildPolicy(categories: [.platform])) == nil)
        #expect(try await Self.code(sample, AppBuildPolicy(categories: [.appStore, .testFlight])) == "app_category_refused")
        #expect(try await Self.code(sample, AppBuildPolicy(minimumBundleVersion: BundleVersion("1.0"))) == nil)
        #expect(try await Self.code(sample, AppBuildPolicy(minimumBundleVersion: BundleVersion("2"))) == "app_version_refused")
        #expect(try await Self.code(sample, AppBuildPolicy(requireDeclared: true)) == nil)
        // A 2020 device (iOS 14) declares nothing: it passes unless the policy requires a build.
        let older = Self.older
        #expect(try await Self.code(older, AppBuildPolicy(categories: [.appStore])) == nil)
        #expect(try await Self.code(older, AppBuildPolicy(categories: [.appStore], requireDeclared: true)) == "app_build_undeclared")
        // The step is reported by name for `signet inspect attestation`.
        let verifier = try AppAttestFixtureTests.verifier(sample, appBuild: AppBuildPolicy(categories: [.appStore]))
        let inspection = await verifier.inspect(
            attestation: sample.bytes("attestation_b64"),
            keyID: sample.json["key_id_b64"]!,
            challenge: sample.challenge,
            at: sample.validAt
        )
        #expect(inspection.steps.last?.name == "11. app build: platform 1")
        #expect(inspection.steps.last?.error?.code == .appCategoryRefused)
    }

    /// The extension map's shapes: Apple's (four little-endian bytes, text), a CBOR unsigned
    /// category, unknown keys ignored; anything else malformed, never read as undeclared.
    @Test func extensionValuesAreReadStrictly() throws {
        let head = [UInt8](repeating: 0xAB, count: 32) + [0x40, 0, 0, 0, 7]
        func parse(_ entries: [(key: CBORValue, value: CBORValue)]) throws -> AppBuild {
            try AuthenticatorData(head + CBOREncoder.encode(.map(entries)), assertion: true).appBuild
        }
        let category = CBORValue.text("apple_validation_category_01")
        let version = CBORValue.text("apple_bundle_version_01")
        #expect(try parse([(category, .bytes([4, 0, 0, 0])), (version, .text("2.1"))]) == AppBuild(category: .appStore, bundleVersion: "2.1"))
        #expect(try parse([(category, .bytes([0x0B, 0x01, 0, 0]))]).category?.rawValue == 0x010B)
        #expect(try parse([(category, .unsigned(5))]) == AppBuild(category: .enterprise))
        #expect(try parse([(.text("future_extension_02"), .unsigned(1))]).isUndeclared)
        #expect(try AuthenticatorData(head, assertion: true).appBuild.isUndeclared)
        let malformed: [[(key: CBORValue, value: CBORValue)]] = [
            [(category, .bytes([4, 0, 0]))],
            [(category, .bytes([4, 0, 0, 0, 0]))],
            [(category, .text("app-store"))],
            [(category, .negative(3))],
            [(category, .unsigned(1 << 32))],
            [(version, .unsigned(42))],
            [(version, .text(""))],
            [(version, .text(String(repeating: "9", count: 65)))],
            [(version, .text("1\r\nSignet-User: admin"))],
            [(version, .text("1.0 beta"))],
            [(version, .text("1.0é"))],
        ]
        for entries in malformed {
            let error = #expect(throws: SignetError.self) { try parse(entries) }
            #expect(error?.code == .malformedCBOR, "\(entries)")
        }
        // An extension value that is not a map is no extension map.
        let error = #expect(throws: SignetError.self) {
            try AuthenticatorData(head + CBOREncoder.encode(.array([.unsigned(1)])), assertion: true)
        }
        #expect(error?.code == .malformedCBOR)
    }

    /// A simulated iOS 27 device declares its build in its attestation and in every assertion; an
    /// update (or a re-signed binary on the same key) declares the new one from its next assertion.
    @Test func aSimulatedDeviceDeclaresItsBuildEverywhere() async throws {
        let ca = try DevelopmentAttestationCA()
        let appID = "ABCDE12345.dev.signet.demo"
        let device = SimulatedAppAttestDevice(appID: appID, ca: ca, appBuild: AppBuild(category: .testFlight, bundleVersion: "41"))
        let challenge = Array("server-challenge".utf8)
        let verified = try await AppAttestAttestationVerifier(
            policy: try AppAttestPolicy(appIDs: [appID], allowDevelopment: true, roots: [ca.root], appBuild: AppBuildPolicy(categories: [.testFlight]))
        ).verify(attestation: try device.attest(clientDataHash: Array(SHA256.hash(data: challenge))), keyID: device.keyID, challenge: challenge, at: Date())
        #expect(verified.appBuild == AppBuild(category: .testFlight, bundleVersion: "41"))

        let algorithm = AppAttestAlgorithm(appIDs: [appID])
        let first = try algorithm.verify(try device.assertion(clientData: [1]), over: [1], with: verified.publicKey)
        #expect(first.counter == 1 && first.appBuild == AppBuild(category: .testFlight, bundleVersion: "41"))
        device.appBuild = AppBuild(category: .development, bundleVersion: "42")
        let second = try algorithm.verify(try device.assertion(clientData: [2]), over: [2], with: verified.publicKey)
        #expect(second.counter == 2 && second.appBuild == AppBuild(category: .development, bundleVersion: "42"))
        device.appBuild = nil
        let third = try algorithm.verify(try device.assertion(clientData: [3]), over: [3], with: verified.publicKey)
        #expect(third.appBuild == AppBuild(), "an App Attest assertion always carries a build, undeclared here")
    }

    /// Assertions written by cbor2 and cryptography, as iOS 27 devices write them (flags 0x40 as in
    /// Apple's sample, or 0xC0 with ED set), verify and declare their build; the build is signed, so
    /// one changed after signing is a signature that fails.
    @Test(arguments: ["0x40", "0xc0"])
    func assertionsFromAnIndependentEncoderDeclareTheirBuild(_ flags: String) async throws {
        guard PythonPeer.available("cbor2, cryptography") else { return }
        let appID = "ABCDE12345.dev.signet.demo"
        let key = P256.Signing.PrivateKey()
        let folder = try SignetProcess.temporaryDirectory()
        try Data(key.pemRepresentation.utf8).write(to: folder.appendingPathComponent("key.pem"))
        let publicKey = try VerificationKey(p256X963: Array(key.publicKey.x963Representation))
        let clientData = Array("GET /vault".utf8)
        func assertion(_ counter: Int, _ extensions: String?) async throws -> [UInt8] {
            let output = try await PythonPeer.run(
                "appattest_assertion_peer.py",
                ["key.pem", appID, String(counter), flags, Base64.encode(clientData)] + (extensions.map { [$0] } ?? []),
                in: folder
            )
            return try #require(Base64.decode(output.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let verifier = AppAttestAssertionVerifier(appIDs: [appID])
        let declared = try verifier.verifyAssertion(
            try await assertion(3, #"{"category": 4, "version": "2026.11.1"}"#), clientData: clientData, publicKey: publicKey, previousCounter: 2)
        #expect(declared.signCount == 3)
        #expect(declared.appBuild == AppBuild(category: .appStore, bundleVersion: "2026.11.1"))
        let asInteger = try verifier.verifyAssertion(
            try await assertion(4, #"{"category": 2, "category_as_int": true, "version": "7"}"#), clientData: clientData, publicKey: publicKey)
        #expect(asInteger.appBuild == AppBuild(category: .testFlight, bundleVersion: "7"))
        let unknownKeys = try verifier.verifyAssertion(
            try await assertion(5, #"{"category": 3, "raw": {"apple_future_02": 1}}"#), clientData: clientData, publicKey: publicKey)
        #expect(unknownKeys.appBuild == AppBuild(category: .development))

        // The category is under the signature: rewriting App Store (4) as development (3) breaks it.
        var object = try CBORDecoder().decode(try await assertion(6, #"{"category": 3, "version": "1"}"#))
        guard case .map(var entries) = object, let index = entries.firstIndex(where: { $0.key == .text("authenticatorData") }),
            case .bytes(var authData) = entries[index].value
        else { Issue.record("not an assertion"); return }
        let at = try #require(authData.lastIndex(of: 3))
        authData[at] = 4
        entries[index].value = .bytes(authData)
        object = .map(entries)
        let error = #expect(throws: SignetError.self) {
            try verifier.verifyAssertion(CBOREncoder.encode(object), clientData: clientData, publicKey: publicKey)
        }
        #expect(error?.code == .signatureInvalid)
    }
}
