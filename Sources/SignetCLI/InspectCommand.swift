// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetAppAttest
import SignetCore
import SwiftASN1
import X509

struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode an App Attest object or receipt, or an Android key attestation chain; print its fields and each verification step.",
        subcommands: [InspectAttestation.self, InspectAssertion.self, InspectReceipt.self, InspectKeyAttestation.self, InspectPlayIntegrity.self]
    )
}

/// The object from a file or stdin, as base64 (standard or URL-safe) or binary CBOR.
func readInspectedObject(_ file: String?) throws -> [UInt8] {
    let bytes = try CLIInput.read(file)
    let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return Base64.decode(text) ?? Base64.urlDecode(text) ?? bytes
}

private func challengeBytes(utf8: String?, b64: String?) throws -> [UInt8] {
    switch (utf8, b64) {
    case (let text?, nil): return Array(text.utf8)
    case (nil, let encoded?):
        guard let bytes = Base64.decode(encoded) ?? Base64.urlDecode(encoded) else {
            throw ValidationError("not base64")
        }
        return bytes
    default: throw ValidationError("give exactly one of the -utf8 and -b64 forms")
    }
}

struct InspectAttestation: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attestation",
        abstract: "Check an attestation object step by step; exit 0 only when every step passes."
    )

    @Option(name: .customLong("app-id"), help: "Accepted App ID, TEAMID.bundle.id (repeatable).")
    var appIDs: [String]

    @Option(help: "The server challenge as text.")
    var challengeUtf8: String?

    @Option(help: "The server challenge as base64.")
    var challengeB64: String?

    @Option(help: "The key id (standard base64) the device reported.")
    var keyId: String

    @Option(help: "Verification time, RFC 3339 (App Attest leaves live a few days).")
    var at: String

    @Flag(help: "The device passed the raw challenge as clientDataHash (Apple's sample does).")
    var rawClientDataHash = false

    @Flag(help: "Accept the development environment.")
    var allowDevelopment = false

    @Option(help: "PEM file of roots to trust instead of Apple's (the simulator's, in development).")
    var trustedRoots: String?

    @Option(name: .customLong("app-category"), help: "A validation category the app build may declare (iOS 27; repeatable): app-store, testflight, development, enterprise, … or a number.")
    var appCategories: [String] = []

    @Option(help: "The lowest CFBundleVersion the app build may declare (iOS 27).")
    var minimumAppVersion: String?

    @Flag(help: "Refuse an attestation that declares no app build (iOS 26 and older).")
    var requireAppBuild = false

    @Argument(help: "The attestation (base64 or CBOR); stdin when absent.")
    var file: String?

    /// The app-build policy the options name; `nil` when they name none.
    func appBuildPolicy() throws -> AppBuildPolicy? {
        guard !appCategories.isEmpty || minimumAppVersion != nil || requireAppBuild else { return nil }
        var policy = AppBuildPolicy(requireDeclared: requireAppBuild)
        if !appCategories.isEmpty {
            policy.categories = Set(try appCategories.map { name in
                guard let category = AppValidationCategory(name: name) else {
                    throw ValidationError("--app-category \(name) is not a validation category")
                }
                return category
            })
        }
        if let minimumAppVersion {
            guard let version = BundleVersion(minimumAppVersion) else {
                throw ValidationError("--minimum-app-version is numbers and periods (42, 2.1.0)")
            }
            policy.minimumBundleVersion = version
        }
        return policy
    }

    func run() async throws {
        guard let time = ISO8601DateFormatter().date(from: at) else { throw ValidationError("--at is RFC 3339") }
        var roots: [Certificate]?
        if let trustedRoots {
            roots = try PEMDocument.parseMultiple(pemString: try CLIInput.readText(trustedRoots)).map {
                try Certificate(derEncoded: $0.derBytes)
            }
        }
        let verifier = AppAttestAttestationVerifier(
            policy: try AppAttestPolicy(
                appIDs: Set(appIDs),
                allowDevelopment: allowDevelopment,
                clientDataHash: rawClientDataHash ? .rawChallenge : .sha256OfChallenge,
                roots: roots,
                appBuild: try appBuildPolicy()
            )
        )
        let inspection = await verifier.inspect(
            attestation: try readInspectedObject(file),
            keyID: keyId,
            challenge: try challengeBytes(utf8: challengeUtf8, b64: challengeB64),
            at: time
        )
        for (index, certificate) in inspection.certificates.enumerated() {
            print("certificate \(index): \(certificate.subject)")
            print("  issuer \(certificate.issuer), valid \(certificate.notValidBefore) to \(certificate.notValidAfter)")
        }
        if let authData = inspection.authenticatorData {
            print("rpIdHash: \(Hex.encode(authData.rpIDHash))")
            print("flags: 0x\(String(authData.flags, radix: 16)), counter: \(authData.signCount)")
            if let aaguid = authData.aaguid {
                print("aaguid: \(String(decoding: aaguid.filter { $0 != 0 }, as: UTF8.self))")
            }
            if let credential = authData.credentialID { print("credentialId: \(Base64.encode(credential))") }
            if authData.extensions != nil { print("extensions: present") }
            print(InspectAppBuild.line(authData.appBuild))
        }
        print("receipt: \(inspection.receipt.count) bytes")
        if let receipt = inspection.verifiedReceipt {
            print(
                "receipt: \(receipt.kind.rawValue), created \(InspectReceipt.rfc3339(receipt.createdAt)), "
                    + "expires \(InspectReceipt.rfc3339(receipt.expiresAt))"
            )
        }
        for step in inspection.steps {
            print(
                "\(step.error == nil ? "pass" : "FAIL") \(step.name)\(step.error.map { ": \($0.code) (\($0.reason))" } ?? "")"
            )
        }
        guard let verified = inspection.verified else {
            print("invalid: \(inspection.steps.firstRefusal?.code.rawValue ?? "unknown")")
            throw ExitCode(1)
        }
        print("valid: keyId \(verified.keyID), \(verified.environment.rawValue), \(verified.appID)")
    }
}

struct InspectAssertion: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assertion",
        abstract: "Check an assertion with the device's public key; exit 0 only when it verifies."
    )

    @Option(name: .customLong("app-id"), help: "Accepted App ID (repeatable).")
    var appIDs: [String]

    @Option(help: "The device's public key (PEM or JWK).")
    var publicKey: String

    @Option(help: "The client data as text.")
    var clientDataUtf8: String?

    @Option(help: "The client data as base64.")
    var clientDataB64: String?

    @Option(help: "The counter stored for the device.")
    var previousCounter: UInt32 = 0

    @Argument(help: "The assertion (base64 or CBOR); stdin when absent.")
    var file: String?

    func run() throws {
        let assertion = try readInspectedObject(file)
        if let object = try? CBORDecoder().decode(assertion), let bytes = object[text: "authenticatorData"]?.bytes,
            let authData = try? AuthenticatorData(bytes, assertion: true)
        {
            print("rpIdHash: \(Hex.encode(authData.rpIDHash))")
            print("flags: 0x\(String(authData.flags, radix: 16)), counter: \(authData.signCount)")
            print(InspectAppBuild.line(authData.appBuild))
        }
        do {
            let counter = try AppAttestAssertionVerifier(appIDs: Set(appIDs)).verify(
                assertion: assertion,
                clientData: try challengeBytes(utf8: clientDataUtf8, b64: clientDataB64),
                publicKey: try VerificationKey(text: try CLIInput.readText(publicKey)),
                previousCounter: previousCounter
            )
            print("valid: counter \(counter)")
        } catch let error as SignetError {
            print("invalid: \(error.code)")
            print("reason: \(error.reason)")
            throw ExitCode(1)
        }
    }
}

/// How `signet inspect` prints the app build a device declared (iOS 27).
enum InspectAppBuild {
    /// `app-build: category app-store (4), bundle version 42`, or `app-build: undeclared (iOS 26 and older)`.
    static func line(_ build: AppBuild) -> String {
        guard !build.isUndeclared else { return "app-build: undeclared (iOS 26 and older)" }
        let category = build.category.map { "\($0.name) (\($0.rawValue))" } ?? "none"
        return "app-build: category \(category), bundle version \(build.bundleVersion ?? "none")"
    }
}
