// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTestSupport
import SignetTrust
import SwiftASN1
import Testing
import X509

/// `SignetClient.updateTrust` against the gateway over TLS: documents taken only over pinned
/// connections, only when signed by a trust key, newer and unexpired; kept across launches; every
/// refusal leaves the held document in force and is reported home.
@Suite(.awaitsCleanups) struct TrustUpdateTests {
    /// A development certificate written once to files, so every gateway started on them serves the
    /// same chain; its pins, the CA, and the trust key documents are signed with.
    struct Fixture {
        var folder: URL
        var tls: GatewayConfiguration.TLS
        var chainPins: [String]
        var ca: Certificate
        var trustKey: SigningKey

        static func make() async throws -> Fixture {
            let folder = try SignetProcess.temporaryDirectory()
            let tls = GatewayConfiguration.TLS(
                certificateFile: folder.appendingPathComponent("tls.pem").path,
                keyFile: folder.appendingPathComponent("tls.key").path,
                development: true
            )
            let first = try await GatewayHarness.start(tls: tls)
            let chain = try #require(first.gateway.tls).chain
            try await first.stop()
            return Fixture(
                folder: folder,
                tls: tls,
                chainPins: try chain.map { try SPKIPin(certificateDER: $0.serializeAsPEM().derBytes).description },
                ca: chain.last!,
                trustKey: try SigningKey.generate(.ed25519)
            )
        }

        /// A document pinning the served chain (and a backup), or `pins` instead.
        func document(version: Int, extraPin: Bool = true, pins: [String]? = nil) -> TrustDocument {
            let now = Date()
            return TrustDocument(
                issuer: "scores",
                issuedAt: now,
                expires: now.addingTimeInterval(3600),
                version: version,
                pinSets: [PinSetClaim(host: "localhost", pins: pins ?? chainPins + (extraPin ? [try! backupPin().description] : []))]
            )
        }

        func sign(_ document: TrustDocument, with key: SigningKey? = nil) async throws -> String {
            try await TrustSigner(key: key ?? trustKey, kid: "trust-1").sign(document)
        }

        /// A gateway serving `jws`.
        func gateway(serving jws: String) async throws -> GatewayHarness {
            let file = folder.appendingPathComponent("served-\(UUID().uuidString).jws")
            try Data(jws.utf8).write(to: file)
            return try await GatewayHarness.start(tls: tls) { $0.trustDocument = .init(file: file.path) }
        }

        func client(for gateway: GatewayHarness, compiled: String, pins: [String]? = nil, state: String) throws -> SignetClient {
            var configuration = SignetClientConfiguration(
                origins: [try Origin(gateway.base)],
                trust: ServerTrustEvaluator(
                    roots: .only([ca]),
                    pinSets: [
                        try PinSet(pattern: try HostPattern("localhost"), pins: Set(try (pins ?? chainPins).map(SPKIPin.init(parsing:))), backupWaived: true)
                    ]
                ),
                timeout: .seconds(10)
            )
            configuration.trustUpdates = TrustUpdates(
                trustKeys: ["trust-1": trustKey.verificationKey.pemRepresentation!],
                compiledDocument: compiled,
                stateDirectory: folder.appendingPathComponent(state).path
            )
            return try SignetClient(configuration: configuration)
        }
    }

    @Test func aNewerDocumentIsTakenKeptAndAppliedToNewConnections() async throws {
        let fixture = try await Fixture.make()
        let gateway = try await fixture.gateway(serving: try await fixture.sign(fixture.document(version: 2)))
        Cleanup.after { try await gateway.stop() }
        let compiled = try await fixture.sign(fixture.document(version: 1, extraPin: false))
        let client = try fixture.client(for: gateway, compiled: compiled, state: "state")
        #expect(try await client.loadTrust()?.version == 1)
        guard case .updated(let version) = await client.updateTrust() else {
            Issue.record("not updated: \(await client.updateTrust())")
            return
        }
        #expect(version == 2)
        #expect(await client.trust.pinSets.first?.pins.count == fixture.chainPins.count + 1, "the new pin set applies")
        guard case .unchanged(2) = await client.updateTrust() else { Issue.record("a second fetch changed something"); return }
        // The pins still admit the gateway: a request over a new connection goes through.
        #expect(try await client.send("GET", gateway.base + "/scores/top", sign: false).status == 200)

        // Another launch of the app starts from the stored document, not the compiled-in one.
        let relaunched = try fixture.client(for: gateway, compiled: compiled, state: "state")
        #expect(try await relaunched.loadTrust()?.version == 2)
    }

    @Test func refusedDocumentsLeaveTheHeldOneAndAreReportedHome() async throws {
        let fixture = try await Fixture.make()
        let compiled = try await fixture.sign(fixture.document(version: 3))

        // Signed by a key the app does not trust: refused, and the refusal reported home.
        let stranger = try await fixture.gateway(
            serving: try await fixture.sign(fixture.document(version: 4), with: try SigningKey.generate(.ed25519))
        )
        Cleanup.after { try await stranger.stop() }
        let client = try fixture.client(for: stranger, compiled: compiled, state: "a")
        guard case .refused(let invalid) = await client.updateTrust() else { Issue.record("accepted"); return }
        #expect(invalid.code == .trustDocumentInvalid)
        #expect(await client.trustDocument?.version == 3, "the held document stays in force")
        let listed = try await client.send(
            "GET",
            stranger.base + "/signet/v1/pin-reports",
            fields: [("Authorization", "Bearer \(GatewayHarness.adminToken)")],
            sign: false
        )
        let reports = try #require(listed.json?["reports"] as? [[String: Any]], "\(listed.text)")
        let report = try #require(reports.first?["report"] as? [String: Any])
        #expect(report["type"] as? String == "trust-update-refused" && report["reason"] as? String == "trust_document_invalid")
        #expect(report["version-held"] as? Int == 3)

        // Older than the one held: a rollback.
        let older = try await fixture.gateway(serving: try await fixture.sign(fixture.document(version: 2)))
        Cleanup.after { try await older.stop() }
        guard case .refused(let rollback) = await (try fixture.client(for: older, compiled: compiled, state: "b")).updateTrust() else {
            Issue.record("rollback accepted")
            return
        }
        #expect(rollback.code == .trustVersionRollback)

        // Altered on the way (a payload byte changed): the signature no longer holds.
        let good = try await fixture.sign(fixture.document(version: 5))
        var parts = good.split(separator: ".").map(String.init)
        var payload = try #require(Base64.urlDecode(parts[1]))
        payload[payload.count / 2] ^= 0x01
        parts[1] = Base64.urlEncode(payload)
        let altered = try await fixture.gateway(serving: parts.joined(separator: "."))
        Cleanup.after { try await altered.stop() }
        guard case .refused(let tampered) = await (try fixture.client(for: altered, compiled: compiled, state: "c")).updateTrust() else {
            Issue.record("altered document accepted")
            return
        }
        #expect(tampered.code == .trustDocumentInvalid)

        // An app whose pins the server does not match (a man in the middle, as far as it can tell):
        // the update never arrives, and the held document stays.
        let genuine = try await fixture.gateway(serving: good)
        Cleanup.after { try await genuine.stop() }
        let strangers = [try backupPin().description, try backupPin().description]
        let pinnedElsewhere = try fixture.client(
            for: genuine,
            compiled: try await fixture.sign(fixture.document(version: 1, pins: strangers)),
            pins: strangers,
            state: "d"
        )
        guard case .refused(let blocked) = await pinnedElsewhere.updateTrust() else { Issue.record("fetched past the pins"); return }
        #expect(blocked.code == .pinMismatch)
        #expect(await pinnedElsewhere.trustDocument?.version == 1)
        #expect(!FileManager.default.fileExists(atPath: fixture.folder.appendingPathComponent("d/trust.jws").path))
    }
}
