// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetAndroid
import SignetCore
import SwiftASN1
import X509

/// `signet inspect key-attestation`: an Android Key Attestation chain checked step by step, with
/// what its attestation record says.
struct InspectKeyAttestation: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key-attestation",
        abstract: "Check an Android key attestation chain step by step; exit 0 only when every step passes."
    )

    @Option(help: "PEM file of the chain the app sent, leaf first (- for stdin).")
    var chain: String

    @Option(help: "Verification time, RFC 3339.")
    var at: String

    @Option(help: "The server challenge as text.")
    var challengeUtf8: String?

    @Option(help: "The server challenge as base64.")
    var challengeB64: String?

    @Option(help: "An allowed package name (repeatable); any when none.")
    var package: [String] = []

    @Option(help: "SHA-256 of an allowed signing certificate, hex (repeatable); any when none.")
    var signingDigest: [String] = []

    @Option(help: "Google's revocation list (the attestation status JSON); not checked when absent.")
    var status: String?

    @Option(help: "PEM file of attestation roots to trust instead of Google's shipped ones.")
    var roots: String?

    @Option(help: "Lowest security level: tee (default) or strongbox.")
    var minimumLevel: String = "tee"

    @Flag(help: "Take an unlocked bootloader and unverified boot (a developer's device).")
    var allowUnlocked = false

    @Flag(help: "Take a software-level attestation (an emulator): development only.")
    var allowSoftware = false

    func run() async throws {
        guard let time = ISO8601DateFormatter().date(from: at) else { throw ValidationError("--at is RFC 3339") }
        let challenge: [UInt8]
        switch (challengeUtf8, challengeB64) {
        case (let text?, nil): challenge = Array(text.utf8)
        case (nil, let encoded?):
            guard let bytes = Base64.decode(encoded) ?? Base64.urlDecode(encoded) else { throw ValidationError("--challenge-b64 is not base64") }
            challenge = bytes
        default: throw ValidationError("give exactly one of --challenge-utf8 and --challenge-b64")
        }
        var policy = AndroidAttestationPolicy(
            packageNames: Set(package),
            signingDigests: Set(try signingDigest.map { digest in
                guard let bytes = Hex.decode(digest), bytes.count == 32 else { throw ValidationError("--signing-digest \(digest) is not 64 hex digits") }
                return bytes
            }),
            requireLockedBootloader: !allowUnlocked,
            requireVerifiedBoot: !allowUnlocked,
            allowSoftware: allowSoftware
        )
        switch minimumLevel {
        case "tee": policy.minimumSecurityLevel = .trustedEnvironment
        case "strongbox": policy.minimumSecurityLevel = .strongBox
        default: throw ValidationError("--minimum-level is tee or strongbox")
        }
        if let roots {
            policy.roots = try AndroidAttestationChain.derCertificates(pem: try CLIInput.readText(roots)).map { try Certificate(derEncoded: $0) }
        }
        let list = try status.map { try AttestationStatusList(json: try CLIInput.read($0)) }
        let inspection = AndroidKeyAttestationVerifier(policy: policy).inspect(
            chain: try AndroidAttestationChain.derCertificates(pem: try CLIInput.readText(chain)),
            challenge: challenge,
            now: time,
            status: list
        )
        for (index, certificate) in inspection.certificates.enumerated() {
            print("certificate \(index): \(certificate.subject)")
            print("  issuer \(certificate.issuer), valid \(certificate.notValidBefore) to \(certificate.notValidAfter)")
        }
        if let description = inspection.description {
            Self.describe(description, attestedIndex: inspection.attestedIndex ?? 0)
        }
        for step in inspection.steps {
            print("\(step.error == nil ? "pass" : "FAIL") \(step.name)\(step.error.map { ": \($0.code) (\($0.reason))" } ?? "")")
        }
        guard let verified = inspection.verified, inspection.passed else {
            print("invalid: \(inspection.steps.firstRefusal?.code.rawValue ?? "unknown")")
            throw ExitCode(1)
        }
        print("valid: \(verified.securityLevel) key, \(verified.packageNames.joined(separator: ", "))")
    }

    static func describe(_ description: KeyDescription, attestedIndex: Int) {
        print("attestation record (certificate \(attestedIndex)):")
        print("  attestation version \(description.attestationVersion), \(description.attestationSecurityLevel) level")
        print("  keymaster/keymint version \(description.keymasterVersion), \(description.keymasterSecurityLevel) level")
        print("  challenge \(String(decoding: description.attestationChallenge, as: UTF8.self).debugDescription) (\(description.attestationChallenge.count) bytes)")
        if let root = description.hardwareEnforced.rootOfTrust ?? description.softwareEnforced.rootOfTrust {
            print("  root of trust: boot \(root.verifiedBootState), \(root.deviceLocked ? "locked" : "unlocked"), boot key \(Hex.encode(root.verifiedBootKey))")
        }
        let levels: [(String, Int?)] = [
            ("os version", description.enforced(\.osVersion)), ("os patch level", description.enforced(\.osPatchLevel)),
            ("vendor patch level", description.enforced(\.vendorPatchLevel)), ("boot patch level", description.enforced(\.bootPatchLevel)),
            ("algorithm", description.enforced(\.algorithm)), ("ec curve", description.enforced(\.ecCurve)), ("origin", description.enforced(\.origin)),
        ]
        for (name, value) in levels { if let value { print("  \(name) \(value)") } }
        if let purposes = description.enforced(\.purposes) { print("  purposes \(purposes.sorted().map(String.init).joined(separator: ", "))") }
        if let app = description.enforced(\.attestationApplicationID) {
            for package in app.packages { print("  package \(package.name) version \(package.version)") }
            for digest in app.signatureDigests { print("  signing digest \(Hex.encode(digest))") }
        }
    }
}
