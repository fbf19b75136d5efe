// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import SwiftASN1
import X509
import Testing

/// `signet trust init|sign|verify` as processes, and the gateway serving the document over TLS —
/// refusing to start with one that has expired or does not pin its own certificate.
@Suite(.awaitsCleanups) struct TrustDocumentGatewayTests {
    @Test func aDraftedSignedDocumentIsServedAndChecked() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        @Sendable func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        let tls = GatewayConfiguration.TLS(
            certificateFile: path("tls.pem"),
            keyFile: path("tls.key"),
            development: true,
            clientCertificates: true
        )
        #expect(try await SignetProcess.signet(["keygen", "--alg", "ecdsa-p256-sha256", "--kid", "trust-1", "--out", path("keys")]).status == 0)
        #expect(try await SignetProcess.signet(["keygen", "--alg", "ed25519", "--kid", "other", "--out", path("keys")]).status == 0)

        // The first start writes the development certificate; `trust init` drafts from what it serves.
        let first = try await GatewayHarness.start(tls: tls)
        let port = first.port
        let ca = try first.gateway.tls!.chain.last!.serializeAsPEM().pemString
        try Data(ca.utf8).write(to: URL(fileURLWithPath: path("ca.pem")))
        let draft = try await SignetProcess.signet(["trust", "init", "--host", "localhost:\(port)", "--backup-out", path("backup.key.pem"), "--issuer", "scores"])
        try await first.stop()
        try #require(draft.status == 0, "\(draft.stderr)")
        #expect(FileManager.default.fileExists(atPath: path("backup.key.pem")), "a new backup key, kept offline")
        try Data(draft.stdout.utf8).write(to: URL(fileURLWithPath: path("draft.json")))
        let signed = try await SignetProcess.signet(["trust", "sign", "--key", path("keys/trust-1.key.pem"), "--kid", "trust-1", path("draft.json")])
        try #require(signed.status == 0, "\(signed.stderr)")
        try Data(signed.stdout.utf8).write(to: URL(fileURLWithPath: path("trust.jws")))

        let verified = try await SignetProcess.signet(["trust", "verify", "--key", path("keys/trust-1.pub.pem"), "--kid", "trust-1", path("trust.jws")])
        #expect(verified.status == 0 && verified.stdout.contains("\"host\" : \"localhost\""), "\(verified.stdout) \(verified.stderr)")
        let stranger = try await SignetProcess.signet(["trust", "verify", "--key", path("keys/other.pub.pem"), path("trust.jws")])
        #expect(stranger.status == 1 && stranger.stdout.hasPrefix("invalid: trust_document_invalid"))

        // Served with an ETag; a matching If-None-Match is 304.
        let gateway = try await GatewayHarness.start(tls: tls) { $0.trustDocument = .init(file: path("trust.jws")) }
        Cleanup.after { try await gateway.stop() }
        let url = gateway.base + "/signet/v1/trust"
        let served = try await SignetProcess.signet(["request", url, "--cacert", path("ca.pem"), "-i"])
        #expect(served.status == 0, "\(served.stderr)")
        #expect(served.stdout.contains("content-type: application/jose") || served.stdout.contains("Content-Type: application/jose"))
        #expect(served.stdout.hasSuffix(signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let etag = try #require(served.lines.first { $0.lowercased().hasPrefix("etag:") }).dropFirst(5).trimmingCharacters(in: .whitespaces)
        let cached = try await SignetProcess.signet(["request", url, "--cacert", path("ca.pem"), "-i", "-H", "If-None-Match: \(etag)"])
        #expect(cached.stdout.hasPrefix("HTTP/1.1 304"), "\(cached.stdout)")
        // Weak comparison, lists, several lines and `*` (RFC 9110 §13.1.2) by curl; a stale tag is a 200.
        for conditions in [["W/\(etag)"], ["\"stale\", \(etag)"], ["\"stale\"", "W/\(etag)"], ["*"], ["\"stale\"", "W/\"stale\""], ["\"stale\", *"]] {
            let answer = try await SignetProcess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", path("ca.pem")] + conditions.flatMap { ["-H", "If-None-Match: \($0)"] } + [url]).stdout
            // `*` counts only as the whole field, never as a list member.
            let current = conditions.contains { $0.contains(etag) || $0 == "*" }
            #expect(answer == (current ? "304" : "200"), "\(conditions) → \(answer)")
        }

        // `signet request` takes the document as an app would, and keeps it between runs.
        let trustArguments = [
            "request", gateway.base + "/scores/top", "--cacert", path("ca.pem"), "--trust-key", path("keys/trust-1.pub.pem"),
            "--trust-kid", "trust-1", "--trust-state", path("state"),
        ]
        let taken = try await SignetProcess.signet(trustArguments)
        #expect(taken.status == 0 && taken.stderr.contains("trust document version 1 taken"), "\(taken.stderr)")
        #expect(FileManager.default.fileExists(atPath: path("state/trust.jws")))
        let again = try await SignetProcess.signet(trustArguments)
        #expect(again.stderr.contains("trust document version 1 unchanged"), "\(again.stderr)")
        let wrongKey = try await SignetProcess.signet([
            "request", gateway.base + "/scores/top", "--cacert", path("ca.pem"), "--trust-key", path("keys/other.pub.pem"),
        ])
        #expect(wrongKey.status == 0 && wrongKey.stderr.contains("refused: trust_document_invalid"), "\(wrongKey.stderr)")
    }

    @Test func theGatewayRefusesADocumentThatWouldStrandItsApps() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        @Sendable func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        #expect(try await SignetProcess.signet(["keygen", "--alg", "ed25519", "--kid", "trust-1", "--out", path("keys")]).status == 0)
        let now = Int(Date().timeIntervalSince1970)
        func sign(_ json: String) async throws -> String {
            try Data(json.utf8).write(to: URL(fileURLWithPath: path("doc.json")))
            let signed = try await SignetProcess.signet(["trust", "sign", "--key", path("keys/trust-1.key.pem"), "--kid", "trust-1", path("doc.json")])
            try #require(signed.status == 0, "\(signed.stderr)")
            let file = path("doc-\(UUID().uuidString).jws")
            try Data(signed.stdout.utf8).write(to: URL(fileURLWithPath: file))
            return file
        }
        let strangers = #"["sha256/AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "sha256/AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI="]"#
        let unpinned = try await sign(#"{"iss": "s", "iat": \#(now), "exp": \#(now + 3600), "version": 1, "pinSets": [{"host": "localhost", "pins": \#(strangers)}]}"#)
        let expired = try await sign(#"{"iss": "s", "iat": \#(now - 7200), "exp": \#(now - 3600), "version": 1, "pinSets": [{"host": "localhost", "pins": \#(strangers)}]}"#)
        for (file, reason) in [(unpinned, "pins none of the certificates"), (expired, "expired")] {
            // The operator's document: a ConfigurationError at its key, not a client's reason code.
            let error = await #expect(throws: ConfigurationError.self) {
                let gateway = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS) { $0.trustDocument = .init(file: file) }
                try await gateway.stop()
            }
            #expect(error?.path == "trustDocument.file" && error?.message.contains(reason) == true, "\(String(describing: error))")
        }
        // A document that does not parse is not signed in the first place.
        try Data(#"{"iss": "s"}"#.utf8).write(to: URL(fileURLWithPath: path("bad.json")))
        let bad = try await SignetProcess.signet(["trust", "sign", "--key", path("keys/trust-1.key.pem"), "--kid", "trust-1", path("bad.json")])
        #expect(bad.status == 64)
    }
}
