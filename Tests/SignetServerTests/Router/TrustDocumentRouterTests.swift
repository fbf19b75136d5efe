// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOHTTP1
import SignetCore
import SignetServer
import SignetTestSupport
import SignetTrust
import Testing

/// The signed trust document as apps fetch it (`GET /signet/v1/trust`) and as an operator replaces
/// it: by a reload, only with a higher version, never with one that has expired. (Pins against the
/// served certificate need TLS: TrustDocumentGatewayTests.)
@Suite(.awaitsCleanups) struct TrustDocumentRouterTests {
    static let pins = ["sha256/AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "sha256/AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI="]

    /// A document of `version`, signed, in a file of `folder`.
    static let issued = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down) - 60)

    static func document(_ version: Int, in folder: URL, expires: Date = issued.addingTimeInterval(86400), host: String = "api.example.com")
        async throws -> (file: String, jws: String)
    {
        let document = TrustDocument(
            issuer: "scores",
            issuedAt: issued,
            expires: expires,
            version: version,
            pinSets: [PinSetClaim(host: host, pins: pins)]
        )
        let jws = try await TrustSigner(key: try SigningKey.generate(.ed25519), kid: "trust-1").sign(document)
        let file = folder.appendingPathComponent("trust-\(UUID().uuidString).jws").path
        try Data(jws.utf8).write(to: URL(fileURLWithPath: file))
        return (file, jws)
    }

    static func fetch(_ harness: GatewayHarness, ifNoneMatch: String? = nil) async throws -> GatewayHarness.Answer {
        try await harness.sendAsWritten("GET", "/signet/v1/trust", fields: ifNoneMatch.map { [("If-None-Match", $0)] } ?? [])
    }

    @Test func theDocumentIsServedConditionallyAndAReloadTakesOnlyAHigherVersion() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        let first = try await Self.document(1, in: folder)
        let harness = try await GatewayHarness.start(store: .memory, transport: .router) { $0.trustDocument = .init(file: first.file) }
        Cleanup.after { try await harness.stop() }
        let reloader = harness.gateways[0].reloader
        let running = try #require(reloader.configuration)

        let served = try await Self.fetch(harness)
        #expect(served.status == 200 && served.text == first.jws)
        #expect(served.headers.first(name: "Content-Type") == "application/jose")
        #expect(served.headers.first(name: "Cache-Control") == "max-age=300")
        let etag = try #require(served.headers.first(name: "ETag"))
        let cached = try await Self.fetch(harness, ifNoneMatch: etag)
        #expect(cached.status == 304 && cached.body.isEmpty && cached.headers.first(name: "ETag") == etag)
        #expect(try await Self.fetch(harness, ifNoneMatch: "W/\(etag)").status == 304)
        #expect(try await Self.fetch(harness, ifNoneMatch: "\"stale\"").status == 200)

        // Version 2 replaces it; the old tag no longer matches.
        let second = try await Self.document(2, in: folder)
        var next = running
        next.trustDocument = .init(file: second.file)
        try reloader.reload(to: next)
        let replaced = try await Self.fetch(harness, ifNoneMatch: etag)
        #expect(replaced.status == 200 && replaced.text == second.jws)
        #expect(replaced.headers.first(name: "ETag") != etag)
        // The same configuration again is no change; nor is the same document signed again.
        try reloader.reload(to: next)
        let resigned = try await Self.document(2, in: folder)
        #expect(resigned.jws != second.jws, "a fresh signature")
        var again = next
        again.trustDocument = .init(file: resigned.file)
        try reloader.reload(to: again)

        // What apps would refuse, or what would strand them, is refused at the document's key, and
        // version 2 stays served.
        let refusals: [(String, String)] = [
            (try await Self.document(1, in: folder).file, "version 1 and the gateway serves version 2"),
            (try await Self.document(2, in: folder, host: "other.example.com").file, "version 2 and the gateway serves version 2 with other content"),
            (try await Self.document(3, in: folder, expires: Date().addingTimeInterval(-60)).file, "expired"),
        ]
        for (file, message) in refusals {
            var refused = next
            refused.trustDocument = .init(file: file)
            let error = #expect(throws: ConfigurationError.self) { try reloader.reload(to: refused) }
            #expect(error?.path == "trustDocument.file" && error?.message.contains(message) == true, "\(String(describing: error))")
        }
        let still = try await Self.fetch(harness)
        #expect(still.status == 200 && still.text == resigned.jws)
    }
}
