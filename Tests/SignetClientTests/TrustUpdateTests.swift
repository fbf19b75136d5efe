// SPDX-License-Identifier: Apache-2.0
import Crypto
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

        /// A gateway serving `jws` (and signing responses with `responseKey` when given).
        func gateway(serving jws: String, responseKey: SigningKey? = nil) async throws -> GatewayHarness {
            let file = folder.appendingPathComponent("served-\(UUID().uuidString).jws")
            try Data(jws.utf8).write(to: file)
            let keyFile = folder.appendingPathComponent("response-\(UUID().uuidString).pem")
            if let responseKey { try Data(responseKey.pemRepresentation!.utf8).write(to: keyFile) }
            return try await GatewayHarness.start(tls: tls) { configuration in
                configuration.trustDocument = .init(file: file.path)
                if responseKey != nil { configuration.responseSigning = .init(keyFile: keyFile.path, keyId: "gateway") }
            }
        }

        func client(for gateway: GatewayHarness, compiled: String, pins: [String]? = nil, state: String) throws -> SignetClient {
            try client(for: gateway, compiled: compiled, pins: pins, store: FileTrustDocumentStore(directory: folder.appendingPathComponent(state).path))
        }

        func client(for gateway: GatewayHarness, compiled: String, pins: [String]? = nil, store: any TrustDocumentStore) throws -> SignetClient {
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
                store: store
            )
            return try SignetClient(configuration: configuration)
        }
    }

    @Test func aNewerDocumentIsTakenKeptAndAppliedToNewConnections() async throws {
        let fixture = try await Fixture.make()
        // The gateway's response-signing key travels in the document.
        let responseKey = try SigningKey.generate(.ed25519)
        var withKeys = fixture.document(version: 2)
        withKeys.responseKeys = ["gateway": responseKey.verificationKey.pemRepresentation!]
        let gateway = try await fixture.gateway(serving: try await fixture.sign(withKeys), responseKey: responseKey)
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
        // The app's own URLSession delegate reads the same pins, from the live trust.
        #expect(client.liveTrust.pinSets.map(\.pins) == (await client.trust.pinSets).map(\.pins))
        guard case .unchanged(2) = await client.updateTrust() else { Issue.record("a second fetch changed something"); return }
        // The pins still admit the gateway: a request over a new connection goes through, and the
        // answer to a signed one is checked with the response key the document named.
        #expect(try await client.send("GET", gateway.base + "/scores/top", sign: false).status == 200)
        #expect(await client.responseKeys != nil)
        _ = try await client.register(using: SoftwareKeyProvider())
        let scored = try await client.send(
            "POST",
            gateway.base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array(#"{"name":"Trusted","score":1}"#.utf8)
        )
        #expect(scored.status == 201 && scored.signature?.keyID == "gateway", "\(scored.text)")

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
        #expect(report["type"] as? String == "trust_update_refused" && report["reason"] as? String == "trust_document_invalid")
        #expect(report["version-held"] as? Int == 3)

        // Older than the one held: a rollback.
        let older = try await fixture.gateway(serving: try await fixture.sign(fixture.document(version: 2)))
        Cleanup.after { try await older.stop() }
        guard case .refused(let rollback) = await (try fixture.client(for: older, compiled: compiled, state: "b")).updateTrust() else {
            Issue.record("rollback accepted")
            return
        }
        #expect(rollback.code == .trustVersionRollback)

        // Altered on the way (the version raised in the payload): the signature no longer holds.
        let good = try await fixture.sign(fixture.document(version: 5))
        var parts = good.split(separator: ".").map(String.init)
        let payload = String(decoding: try #require(Base64.urlDecode(parts[1])), as: UTF8.self)
        #expect(payload.contains("\"version\":5"))
        parts[1] = Base64.urlEncode(Array(payload.replacingOccurrences(of: "\"version\":5", with: "\"version\":9").utf8))
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

    /// The rotation the documents exist for: the app ships pinning server keys A and B; it takes a
    /// document pinning A, B and C while the gateway serves A; the gateway moves to B and the app
    /// still connects; it takes one pinning B and C, the gateway moves to C, and it still connects —
    /// while a copy of the app that never updated is locked out of C.
    @Test func aRotationFromAThroughBToC() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        let ca = try CertificateIssuer.selfSignedCA(commonName: "Rotation CA")
        func server(_ name: String) throws -> (tls: GatewayConfiguration.TLS, pin: String) {
            let key = P256.Signing.PrivateKey()
            let leaf = try ca.issue(
                commonName: "localhost",
                publicKey: Certificate.PublicKey(key.publicKey),
                usage: .server,
                hosts: ["localhost"],
                notAfter: Date().addingTimeInterval(86_400)
            )
            let chain = folder.appendingPathComponent("\(name).pem")
            let keyFile = folder.appendingPathComponent("\(name).key")
            try Data((try leaf.serializeAsPEM().pemString + "\n" + ca.certificatePEM + "\n").utf8).write(to: chain)
            try Data(key.pemRepresentation.utf8).write(to: keyFile)
            return (.init(certificateFile: chain.path, keyFile: keyFile.path), SPKIPin(spkiDER: key.publicKey.derRepresentation).description)
        }
        let (a, b, c) = (try server("a"), try server("b"), try server("c"))
        let trustKey = try SigningKey.generate(.p256)
        func document(_ version: Int, _ pins: [String]) async throws -> String {
            var claim = PinSetClaim(host: "localhost", pins: pins)
            claim.positions = ["leaf"]
            let now = Date()
            let document = TrustDocument(issuer: "scores", issuedAt: now, expires: now.addingTimeInterval(3600), version: version, pinSets: [claim])
            return try await TrustSigner(key: trustKey, kid: "trust-1").sign(document)
        }
        var port = 0
        func gateway(_ server: (tls: GatewayConfiguration.TLS, pin: String), serving jws: String) async throws -> GatewayHarness {
            let file = folder.appendingPathComponent("trust-\(UUID().uuidString).jws")
            try Data(jws.utf8).write(to: file)
            let started = try await GatewayHarness.start(tls: server.tls) { [port] configuration in
                configuration.listen.port = port
                configuration.deviceCA = nil
                configuration.trustDocument = .init(file: file.path)
            }
            port = started.port
            return started
        }
        let compiled = try await document(1, [a.pin, b.pin])
        func app(state: String) throws -> SignetClient {
            var configuration = SignetClientConfiguration(
                origins: [try Origin("https://localhost:\(port)")],
                trust: ServerTrustEvaluator(roots: .only([ca.certificate])),
                pinReportPath: nil,
                timeout: .seconds(10)
            )
            configuration.trustUpdates = TrustUpdates(
                trustKeys: ["trust-1": trustKey.verificationKey.pemRepresentation!],
                compiledDocument: compiled,
                stateDirectory: folder.appendingPathComponent(state).path
            )
            return try SignetClient(configuration: configuration)
        }

        var running = try await gateway(a, serving: try await document(2, [a.pin, b.pin, c.pin]))
        let updated = try app(state: "updated")
        let stale = try app(state: "stale")
        try await updated.loadTrust()
        try await stale.loadTrust()
        guard case .updated(2) = await updated.updateTrust() else { Issue.record("v2 not taken"); return }

        await updated.closeConnections()
        try await running.stop()
        running = try await gateway(b, serving: try await document(3, [b.pin, c.pin]))
        #expect(try await updated.send("GET", running.base + "/scores/top", sign: false).status == 200, "B is pinned")
        guard case .updated(3) = await updated.updateTrust() else { Issue.record("v3 not taken"); return }

        await updated.closeConnections()
        try await running.stop()
        running = try await gateway(c, serving: try await document(3, [b.pin, c.pin]))
        Cleanup.after { [running] in try await running.stop() }
        #expect(try await updated.send("GET", running.base + "/scores/top", sign: false).status == 200, "C is pinned")
        let error = await #expect(throws: SignetError.self) { try await stale.send("GET", running.base + "/scores/top", sign: false) }
        #expect(error?.code == .pinMismatch, "the app that never updated pins only A and B")
    }

    /// A compiled-in document past its expiry, and no update: its pin sets' hard-expiry setting
    /// decides — report-only lets the app through (and reports), keep-enforcing does not.
    @Test(arguments: [("report-only", true), ("keep-enforcing", false)])
    func aHardExpiredCompiledInDocumentFollowsItsSetting(_ behaviour: String, _ connects: Bool) async throws {
        let fixture = try await Fixture.make()
        let gateway = try await fixture.gateway(serving: try await fixture.sign(fixture.document(version: 1)))
        Cleanup.after { try await gateway.stop() }
        let past = Date().addingTimeInterval(-86_400)
        var claim = PinSetClaim(
            host: "localhost",
            pins: [try backupPin().description, try backupPin().description],
            hardExpiry: past,
            hardExpiryBehaviour: behaviour
        )
        claim.softExpiry = past.addingTimeInterval(-86_400)
        let expired = TrustDocument(
            issuer: "scores",
            issuedAt: past.addingTimeInterval(-172_800),
            expires: past,
            version: 1,
            pinSets: [claim]
        )
        let client = try fixture.client(for: gateway, compiled: try await fixture.sign(expired), pins: claim.pins, state: "s")
        #expect(try await client.loadTrust()?.version == 1, "the shipped document still says what the app shipped with")
        if connects {
            #expect(try await client.send("GET", gateway.base + "/scores/top", sign: false).status == 200)
        } else {
            let error = await #expect(throws: SignetError.self) { try await client.send("GET", gateway.base + "/scores/top", sign: false) }
            #expect(error?.code == .pinMismatch)
        }
    }

    /// An app's own store (the Keychain on Apple platforms) is what the client reads at launch and
    /// writes on an update; a stored document is verified again before it is believed.
    @Test func anAppsOwnStoreKeepsTheDocumentAndIsNotBelievedBlindly() async throws {
        final class Recording: TrustDocumentStore, @unchecked Sendable {
            var document: String?
            var saves = 0
            func load() throws -> String? { document }
            func save(_ document: String) throws {
                self.document = document
                saves += 1
            }
        }
        let fixture = try await Fixture.make()
        let served = try await fixture.sign(fixture.document(version: 3))
        let gateway = try await fixture.gateway(serving: served)
        Cleanup.after { try await gateway.stop() }
        let compiled = try await fixture.sign(fixture.document(version: 1, extraPin: false))
        let store = Recording()
        let client = try fixture.client(for: gateway, compiled: compiled, store: store)
        guard case .updated(3) = await client.updateTrust() else { Issue.record("not updated"); return }
        #expect(store.document == served && store.saves == 1)
        #expect(try await fixture.client(for: gateway, compiled: compiled, store: store).loadTrust()?.version == 3)

        // Altered in the store (a byte of the payload changed): the launch falls back to the compiled-in one.
        var bytes = Array(served.utf8)
        let payload = bytes.firstIndex(of: UInt8(ascii: "."))! + 5
        bytes[payload] = bytes[payload] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        store.document = String(decoding: bytes, as: UTF8.self)
        #expect(try await fixture.client(for: gateway, compiled: compiled, store: store).loadTrust()?.version == 1)

        // A store that cannot write (a Keychain without its entitlement): the newer pins apply all
        // the same, and the client says why they were not kept.
        struct Refusing: TrustDocumentStore {
            func load() throws -> String? { nil }
            func save(_ document: String) throws { throw SignetError(.trustDocumentInvalid, "errSecMissingEntitlement") }
        }
        let unkept = try fixture.client(for: gateway, compiled: compiled, store: Refusing())
        guard case .updated(3) = await unkept.updateTrust() else { Issue.record("not applied"); return }
        #expect(await unkept.trustDocument?.version == 3)
        #expect(await unkept.trustStoreFailure?.reason.contains("errSecMissingEntitlement") == true)
        #expect(await client.trustStoreFailure == nil)
    }

    /// The file store writes `trust.jws` readable by its owner only and replaces it without leaving
    /// a temporary file behind.
    @Test func theFileStoreIsPrivateAndReplacesWhole() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trust-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileTrustDocumentStore(directory: folder.appendingPathComponent("state").path)
        #expect(try store.load() == nil)
        try store.save("first")
        try store.save("second")
        #expect(try store.load() == "second")
        let files = try FileManager.default.contentsOfDirectory(atPath: store.directory)
        #expect(files == ["trust.jws"])
        let mode = try FileManager.default.attributesOfItem(atPath: store.directory + "/trust.jws")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A folder that cannot be written is an error, not a silent loss.
        let blocked = FileTrustDocumentStore(directory: "/proc/signet-cannot-write")
        #expect(throws: SignetError.self) { try blocked.save("x") }
    }
}
