// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetAndroid
import SignetCore

/// `signet inspect play-integrity`: a classic Play Integrity token decrypted, verified and judged
/// step by step with the Play Console's two keys, with the verdict it carries.
struct InspectPlayIntegrity: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play-integrity",
        abstract: "Check a Play Integrity token step by step; exit 0 only when every step passes."
    )

    @Option(help: "File with the token the app received (a compact JWE; - for stdin).")
    var token: String

    @Option(help: "The Play Console's decryption key, base64.")
    var decryptionKeyB64: String

    @Option(help: "The Play Console's verification key: a PEM file, or the base64 the console shows.")
    var verificationKey: String

    @Option(help: "The nonce the token must carry (the server's challenge); not checked when absent.")
    var nonce: String?

    @Option(help: "An allowed package name (repeatable); any when none.")
    var package: [String] = []

    @Option(help: "SHA-256 of an allowed app signing certificate, hex (repeatable); any when none.")
    var certificateDigest: [String] = []

    @Option(help: "Weakest device integrity taken: basic, device (default) or strong.")
    var minimumDeviceIntegrity: String = "device"

    @Flag(help: "Require a licensed account.")
    var requireLicensed = false

    @Flag(help: "Take an app Google Play does not recognise.")
    var allowUnrecognized = false

    @Option(help: "Oldest token taken, in seconds.")
    var maximumAge: Int = 300

    @Option(help: "Verification time, RFC 3339 (now when absent).")
    var at: String?

    func run() async throws {
        let time = try at.map { text in
            guard let date = ISO8601DateFormatter().date(from: text) else { throw ValidationError("--at is RFC 3339") }
            return date
        } ?? Date()
        let level: PlayIntegrityPolicy.DeviceIntegrity
        switch minimumDeviceIntegrity {
        case "basic": level = .basic
        case "device": level = .device
        case "strong": level = .strong
        default: throw ValidationError("--minimum-device-integrity is basic, device or strong")
        }
        let policy = PlayIntegrityPolicy(
            packageNames: Set(package),
            certificateDigests: Set(try certificateDigest.map { digest in
                guard let bytes = Hex.decode(digest), bytes.count == 32 else { throw ValidationError("--certificate-digest \(digest) is not 64 hex digits") }
                return bytes
            }),
            requireRecognizedApp: !allowUnrecognized,
            minimumDeviceIntegrity: level,
            requireLicensed: requireLicensed,
            maximumAge: TimeInterval(maximumAge)
        )
        // A file path, or the key itself as the console shows it.
        let keyText = FileManager.default.fileExists(atPath: verificationKey) ? try CLIInput.readText(verificationKey) : verificationKey
        let verifier: PlayIntegrityVerifier
        do {
            verifier = try PlayIntegrityVerifier(decryptionKey: decryptionKeyB64, verificationKey: keyText, policy: policy)
        } catch let error as SignetError {
            throw ValidationError(error.reason)
        }
        let inspection = verifier.inspect(try CLIInput.readText(token), nonce: nonce, now: time)
        if let verdict = inspection.verdict ?? inspection.partialVerdict { Self.describe(verdict) }
        for step in inspection.steps {
            print("\(step.error == nil ? "pass" : "FAIL") \(step.name)\(step.error.map { ": \($0.code) (\($0.reason))" } ?? "")")
        }
        guard let verdict = inspection.verdict, inspection.passed else {
            print("invalid: \(inspection.steps.firstRefusal?.code.rawValue ?? "unknown")")
            throw ExitCode(1)
        }
        print("valid: \(verdict.appIntegrity?.packageName ?? "-"), \(verdict.deviceIntegrityLevel?.label ?? "-")")
    }

    static func describe(_ verdict: PlayIntegrityVerdict) {
        print("verdict:")
        let request = verdict.requestDetails
        print("  request package \(request?.requestPackageName ?? "-"), made \(verdict.timestamp.map { "\($0)" } ?? "-")")
        if let nonce = request?.nonce { print("  nonce \(nonce.debugDescription)") }
        if let hash = request?.requestHash { print("  request hash \(hash.debugDescription)") }
        let app = verdict.appIntegrity
        print("  app \(app?.appRecognitionVerdict ?? "-"): \(app?.packageName ?? "-") version \(app?.versionCode ?? "-")")
        for digest in app?.certificateSha256Digest ?? [] {
            print("  signing certificate \(Base64.urlDecode(digest).map(Hex.encode) ?? digest)")
        }
        print("  device \((verdict.deviceIntegrity?.deviceRecognitionVerdict ?? []).joined(separator: ", "))")
        print("  licence \(verdict.accountDetails?.appLicensingVerdict ?? "-")")
    }
}
