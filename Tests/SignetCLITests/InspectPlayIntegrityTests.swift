// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// `signet inspect play-integrity` over a token joserfc made as Google Play does, with the keys as
/// the Play Console shows them: every step and the verdict printed, exit 0; or `invalid: <reason>`,
/// exit 1.
@Suite struct InspectPlayIntegrityTests {
    @Test func aTokenIsCheckedStepByStep() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-pi-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let decryption = SymmetricKey(size: .bits256).withUnsafeBytes { Base64.encode(Array($0)) }
        let signing = P256.Signing.PrivateKey()
        let keyFile = folder.appendingPathComponent("signing.pem")
        try Data(signing.pemRepresentation.utf8).write(to: keyFile)
        let verificationFile = folder.appendingPathComponent("verification.pem")
        try Data(signing.publicKey.pemRepresentation.utf8).write(to: verificationFile)
        let verdict: [String: Any] = [
            "requestDetails": ["requestPackageName": "com.example.scores", "nonce": "challenge-9", "timestampMillis": "1764000000000"],
            "appIntegrity": ["appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": "com.example.scores", "certificateSha256Digest": [], "versionCode": "3"],
            "deviceIntegrity": ["deviceRecognitionVerdict": ["MEETS_DEVICE_INTEGRITY"]],
            "accountDetails": ["appLicensingVerdict": "UNEVALUATED"],
        ]
        let verdictFile = folder.appendingPathComponent("verdict.json")
        try JSONSerialization.data(withJSONObject: verdict).write(to: verdictFile)
        let token = try await PythonPeer.run("play_integrity_peer.py", ["make", decryption, keyFile.path, verdictFile.path])
        let tokenFile = folder.appendingPathComponent("token.txt")
        try Data(token.utf8).write(to: tokenFile)

        let base = [
            "inspect", "play-integrity", "--token", tokenFile.path, "--decryption-key-b64", decryption,
            "--at", "2025-11-24T16:00:30Z", "--package", "com.example.scores",
        ]
        // The verification key as a PEM file, then as the base64 the console shows.
        let good = try await SignetProcess.signet(base + ["--verification-key", verificationFile.path, "--nonce", "challenge-9"])
        #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
        #expect(good.lines.contains("  nonce \"challenge-9\""))
        #expect(good.lines.contains("pass the verdict is signed by Google Play (JWS ES256)"))
        #expect(good.lines.last { !$0.isEmpty } == "valid: com.example.scores, MEETS_DEVICE_INTEGRITY")
        let console = Base64.encode(Array(signing.publicKey.derRepresentation))
        #expect(try await SignetProcess.signet(base + ["--verification-key", console]).status == 0)

        let cases: [([String], String)] = [
            (["--verification-key", console, "--nonce", "challenge-8"], "attestation_nonce_mismatch"),
            (["--verification-key", console, "--minimum-device-integrity", "strong"], "integrity_verdict_insufficient"),
            (["--verification-key", console, "--require-licensed"], "integrity_verdict_insufficient"),
            (["--verification-key", Base64.encode(Array(P256.Signing.PrivateKey().publicKey.derRepresentation))], "token_invalid"),
            (["--verification-key", console, "--maximum-age", "10"], "token_expired"),
        ]
        for (extra, reason) in cases {
            let refused = try await SignetProcess.signet(base + extra)
            #expect(refused.status == 1 && refused.lines.contains("invalid: \(reason)"), "\(extra): \(refused.stdout)\(refused.stderr)")
        }
    }
}
