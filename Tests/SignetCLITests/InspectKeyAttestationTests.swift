// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetTestSupport
import Testing

/// `signet inspect key-attestation` over the real Android chains: every step and the record
/// printed, exit 0; or the first refusal as `invalid: <reason>`, exit 1.
@Suite struct InspectKeyAttestationTests {
    static let chain = SignetProcess.vectors.appendingPathComponent("android/ec-tee-chain.pem").path
    static let status = SignetProcess.vectors.appendingPathComponent("android/attestation-status-sample.json").path

    @Test func aRealChainPassesEveryStepAndItsRecordIsPrinted() async throws {
        let base = ["inspect", "key-attestation", "--chain", Self.chain, "--at", "2024-01-01T00:00:00Z", "--challenge-utf8", "abc"]
        let good = try await SignetProcess.signet(base + ["--allow-unlocked", "--status", Self.status, "--package", "com.android.keychain"])
        #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
        #expect(good.lines.contains("  attestation version 3, tee level"))
        #expect(good.lines.contains("  root of trust: boot unverified, unlocked, boot key " + String(repeating: "0", count: 64)))
        #expect(good.lines.contains("  os patch level 201907"))
        #expect(good.lines.contains("pass no certificate is revoked or suspended"))
        #expect(good.lines.contains("pass boot state (not required)"))
        #expect(good.lines.last { $0.hasPrefix("valid:") }?.hasPrefix("valid: tee key, android, com.android.keychain") == true)
        // The app's signing certificate, by the digest the record carries.
        let signed = try await SignetProcess.signet(
            base + ["--allow-unlocked", "--signing-digest", "301aa3cb081134501c45f1422abc66c24224fd5ded5fdc8f17e697176fd866aa"]
        )
        #expect(signed.status == 0, "\(signed.stdout)")

        // Each refusal by its reason, with the step that failed.
        let cases: [([String], String)] = [
            (["--allow-unlocked", "--challenge-utf8", "abd"], "attestation_nonce_mismatch"),
            ([], "attestation_boot_state"),
            (["--allow-unlocked", "--package", "com.example.bank"], "app_id_mismatch"),
            (["--allow-unlocked", "--minimum-level", "strongbox"], "attestation_security_level"),
            (["--allow-unlocked", "--signing-digest", String(repeating: "ab", count: 32)], "app_id_mismatch"),
        ]
        for (extra, reason) in cases {
            var arguments = base
            if let at = extra.firstIndex(of: "--challenge-utf8") {
                arguments[arguments.firstIndex(of: "--challenge-utf8")! + 1] = extra[at + 1]
                arguments += extra.enumerated().filter { $0.offset != at && $0.offset != at + 1 }.map(\.element)
            } else {
                arguments += extra
            }
            let refused = try await SignetProcess.signet(arguments)
            #expect(refused.status == 1 && refused.lines.contains("invalid: \(reason)"), "\(extra): \(refused.stdout)\(refused.stderr)")
            #expect(refused.stdout.contains("FAIL "))
        }
        let expired = try await SignetProcess.signet(
            ["inspect", "key-attestation", "--chain", Self.chain, "--at", "2027-01-01T00:00:00Z", "--challenge-utf8", "abc", "--allow-unlocked"]
        )
        #expect(expired.status == 1 && expired.lines.contains("invalid: attestation_expired"))
    }
}
