// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetClient
import SignetCore
import SignetMiddleware
import SignetServer
import SignetTestSupport
import SwiftASN1
import Testing
import X509

/// The client against real TLS servers on loopback: the genuine server, a man-in-the-middle whose
/// certificate a trusted CA issued for another key, and certificates that must fail before pins count.
@Suite(.awaitsCleanups) struct ServerTrustTests {
    let pki: TestPKI
    let genuine: TestPKI.Leaf

    init() throws {
        pki = try TestPKI()
        genuine = try pki.leaf()
    }

    func client(
        ports: [Int],
        pins: Set<SPKIPin>,
        mode: PinSet.Mode = .enforce,
        positions: Set<PinSet.Position> = Set(PinSet.Position.allCases),
        reportTo home: Int? = nil,
        roots: [Certificate]? = nil
    ) throws -> SignetClient {
        let origins = try ((home.map { [$0] } ?? []) + ports).map { try Origin(scheme: "https", host: "localhost", port: $0) }
        var configuration = SignetClientConfiguration(
            origins: origins,
            trust: ServerTrustEvaluator(
                roots: .only(roots ?? [pki.ca.certificate]),
                pinSets: [try PinSet(pattern: try HostPattern("localhost"), pins: pins, positions: positions, mode: mode)]
            ),
            pinReportPath: home == nil ? nil : "/signet/v1/pin-reports",
            timeout: .seconds(10)
        )
        // These tests count what reached the server: a GET retried after a timeout on a loaded
        // machine would be counted twice.
        configuration.retry = .none
        return try SignetClient(configuration: configuration)
    }

    @Test func aPinnedClientConnectsToTheGenuineServer() async throws {
        let server = try await TLSTestServer.start(name: "genuine", chainPEM: genuine.chainPEM, keyPEM: genuine.keyPEM)
        Cleanup.after { await server.stop() }
        let client = try client(ports: [server.port], pins: [try genuine.pin, try backupPin()])
        let answer = try await client.send("GET", "https://localhost:\(server.port)/hello")
        #expect(answer.status == 200)
        #expect(answer.text == "hello from genuine")
        let evaluation = try #require(await client.lastPinEvaluation[try Origin("https://localhost:\(server.port)")])
        #expect(evaluation.decision == .allow)
        #expect(evaluation.seen.map(\.position) == [.leaf, .root])
        // Keep-alive: a second request reuses the connection and still works.
        #expect(try await client.send("GET", "https://localhost:\(server.port)/hello").status == 200)
        #expect(server.requestCount == 2)
    }

    @Test func concurrentRequestsShareTheConnectionAndAllComeBack() async throws {
        let server = try await TLSTestServer.start(name: "genuine", chainPEM: genuine.chainPEM, keyPEM: genuine.keyPEM)
        Cleanup.after { await server.stop() }
        let client = try client(ports: [server.port], pins: [try genuine.pin, try backupPin()])
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask { try await client.send("GET", "https://localhost:\(server.port)/hello").status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 20))
        #expect(server.requestCount == 20)
    }

    /// Cancelling a request still queued behind another on the shared connection takes it out of
    /// the queue; the one in flight and those after it come back on the same connection.
    @Test func cancellingAQueuedRequestLeavesTheSharedConnectionToTheOthers() async throws {
        let server = try await TLSTestServer.start(name: "genuine", chainPEM: genuine.chainPEM, keyPEM: genuine.keyPEM)
        Cleanup.after { await server.stop() }
        let client = try client(ports: [server.port], pins: [try genuine.pin, try backupPin()])
        let base = "https://localhost:\(server.port)"
        #expect(try await client.send("GET", base + "/hello").status == 200)  // the connection is open
        let inFlight = Task { try await client.send("GET", base + "/pause?ms=600").status }
        try await Task.sleep(for: .milliseconds(100))
        let queued = Task { try await client.send("GET", base + "/hello").status }
        try await Task.sleep(for: .milliseconds(100))
        queued.cancel()
        let after = Task { try await client.send("GET", base + "/hello").status }
        #expect(try await inFlight.value == 200, "the request in flight was not cut off")
        #expect(try await after.value == 200)
        let cancelled = await queued.result
        #expect(throws: CancellationError.self) { try cancelled.get() }
        // The cancelled request never reached the server.
        #expect(server.requestCount == 2)
    }

    /// A server that accepts the request and never answers: the client gives up at its timeout
    /// (the connection is closed under the waiting request), and the next request works.
    @Test func aServerThatNeverAnswersFailsAtTheTimeout() async throws {
        let server = try await TLSTestServer.start(name: "genuine", chainPEM: genuine.chainPEM, keyPEM: genuine.keyPEM)
        Cleanup.after { await server.stop() }
        let client = try SignetClient(
            configuration: .init(
                origins: [try Origin("https://localhost:\(server.port)")],
                trust: ServerTrustEvaluator(roots: .only([pki.ca.certificate])),
                timeout: .seconds(3)
            )
        )
        // Warm up: the connection and handshake are not what is measured.
        #expect(try await client.send("GET", "https://localhost:\(server.port)/hello").status == 200)
        let started = ContinuousClock.now
        await expectCode(.requestTimeout) { _ = try await client.send("GET", "https://localhost:\(server.port)/slow") }
        // Ended by the 3 s timeout, not by the server's 30 s. (The bound is loose on purpose: the
        // whole suite shares two cores and one cooperative pool with the exactly-once storms.)
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(try await client.send("GET", "https://localhost:\(server.port)/hello").status == 200)
    }

    @Test func nobodyListeningIsConnectionFailed() async throws {
        // A port that was just free: bind, note it, close.
        let server = try await TLSTestServer.start(name: "gone", chainPEM: genuine.chainPEM, keyPEM: genuine.keyPEM)
        let port = server.port
        await server.stop()
        let client = try client(ports: [port], pins: [try genuine.pin, try backupPin()])
        await expectCode(.connectionFailed) { _ = try await client.send("GET", "https://localhost:\(port)/hello") }
    }

    /// A response signature that is not bound to the request (no `"signature";req`) could be
    /// replayed against any request: the client refuses it.
    @Test func aResponseSignatureNotBoundToTheRequestIsRefused() async throws {
        let serverKey = try SigningKey.generate(.ed25519)
        let server = try await TLSTestServer.start(
            name: "genuine",
            chainPEM: genuine.chainPEM,
            keyPEM: genuine.keyPEM,
            responseSigner: MessageSigner(key: serverKey, keyID: "gateway", algorithm: Ed25519Algorithm())
        )
        Cleanup.after { await server.stop() }
        let client = try SignetClient(
            configuration: .init(
                origins: [try Origin("https://localhost:\(server.port)")],
                trust: ServerTrustEvaluator(roots: .only([pki.ca.certificate])),
                responseKeys: KeyRing([KeyRecord(keyID: "gateway", algorithm: "ed25519", key: serverKey.verificationKey)]),
                requireSignedResponses: true
            )
        )
        await expectCode(.responseSignatureInvalid) {
            _ = try await client.send("GET", "https://localhost:\(server.port)/signed-status")
        }
        await expectCode(.responseSignatureInvalid) {
            _ = try await client.send("GET", "https://localhost:\(server.port)/hello")  // unsigned
        }
    }

    @Test func aRootPinMatchesTheValidatedChainEvenWhenTheServerSendsOnlyItsLeaf() async throws {
        let leafOnly = try genuine.certificate.serializeAsPEM().pemString
        let server = try await TLSTestServer.start(name: "leaf-only", chainPEM: leafOnly, keyPEM: genuine.keyPEM)
        Cleanup.after { await server.stop() }
        let caPin = try SPKIPin(certificateDER: pki.ca.certificate.serializeAsPEM().derBytes)
        let client = try client(ports: [server.port], pins: [caPin, try backupPin()], positions: [.root])
        #expect(try await client.send("GET", "https://localhost:\(server.port)/hello").status == 200)
    }

    @Test func aManInTheMiddleWithATrustedCertificateIsRefusedAndReported() async throws {
        let home = try await TLSTestServer.start(name: "genuine", chainPEM: genuine.chainPEM, keyPEM: genuine.keyPEM)
        let impostor = try pki.leaf()  // same trusted CA, same host names, another key
        let mitm = try await TLSTestServer.start(name: "mitm", chainPEM: impostor.chainPEM, keyPEM: impostor.keyPEM)
        Cleanup.after { await home.stop(); await mitm.stop() }
        let client = try client(ports: [mitm.port], pins: [try genuine.pin, try backupPin()], reportTo: home.port)

        do {
            _ = try await client.send("GET", "https://localhost:\(mitm.port)/hello")
            Issue.record("the man in the middle was trusted")
        } catch let error as SignetError {
            #expect(error.code == .pinMismatch)
            // OkHttp-style: the served chain's pins, then the configured ones.
            #expect(error.reason.contains(try impostor.pin.description))
            #expect(error.reason.contains(try genuine.pin.description))
        }
        #expect(mitm.requestCount == 0, "nothing may reach the impostor")
        #expect(await client.pendingPinReports.count == 1)

        // The next good connection to the app's own server delivers the report there.
        #expect(try await client.send("GET", "https://localhost:\(home.port)/hello").status == 200)
        #expect(await client.pendingPinReports.isEmpty)
        let report = try #require(home.receivedReports.first)
        #expect(report["hostname"] as? String == "localhost")
        #expect(report["port"] as? Int == mitm.port)
        #expect(report["enforce-pinning"] as? Bool == true)
        #expect((report["known-pins"] as? [String])?.contains(try genuine.pin.hpkpDescription) == true)
        let served = try #require(report["served-certificate-chain"] as? [String])
        #expect(try Certificate(pemEncoded: served[0]) == impostor.certificate)
        #expect(served.count == 2, "as sent: leaf and CA")
    }

    @Test func reportOnlyConnectsAndReports() async throws {
        let home = try await TLSTestServer.start(name: "genuine", chainPEM: genuine.chainPEM, keyPEM: genuine.keyPEM)
        let impostor = try pki.leaf()
        let mitm = try await TLSTestServer.start(name: "mitm", chainPEM: impostor.chainPEM, keyPEM: impostor.keyPEM)
        Cleanup.after { await home.stop(); await mitm.stop() }
        let client = try client(
            ports: [mitm.port],
            pins: [try genuine.pin, try backupPin()],
            mode: .reportOnly,
            reportTo: home.port
        )
        let answer = try await client.send("GET", "https://localhost:\(mitm.port)/hello")
        #expect(answer.text == "hello from mitm")
        #expect(await client.lastPinEvaluation[try Origin("https://localhost:\(mitm.port)")]?.decision == .allowReported)
        #expect(home.receivedReports.count == 1)
        #expect(home.receivedReports.first?["enforce-pinning"] as? Bool == false)
    }

    /// Expiry never turns pinning off silently: past the soft date it still enforces and asks for a
    /// refresh; past the hard date it does what the configuration says.
    @Test func pinExpiryKeepsEnforcingOrSwitchesToReportOnlyAsConfigured() async throws {
        let home = try await TLSTestServer.start(name: "genuine", chainPEM: genuine.chainPEM, keyPEM: genuine.keyPEM)
        let impostor = try pki.leaf()
        let mitm = try await TLSTestServer.start(name: "mitm", chainPEM: impostor.chainPEM, keyPEM: impostor.keyPEM)
        Cleanup.after { await home.stop(); await mitm.stop() }
        let yesterday = Date().addingTimeInterval(-86_400)
        func client(_ pinSet: PinSet) throws -> SignetClient {
            try SignetClient(
                configuration: .init(
                    origins: [try Origin("https://localhost:\(home.port)"), try Origin("https://localhost:\(mitm.port)")],
                    trust: ServerTrustEvaluator(roots: .only([pki.ca.certificate]), pinSets: [pinSet]),
                    timeout: .seconds(10)
                )
            )
        }
        let pins: Set<SPKIPin> = [try genuine.pin, try backupPin()]
        let localhost = try HostPattern("localhost")

        let soft = try client(try PinSet(pattern: localhost, pins: pins, softExpiry: yesterday))
        #expect(try await soft.send("GET", "https://localhost:\(home.port)/hello").status == 200)
        #expect(await soft.lastPinEvaluation[try Origin("https://localhost:\(home.port)")]?.needsRefresh == true)
        await expectCode(.pinMismatch) { _ = try await soft.send("GET", "https://localhost:\(mitm.port)/hello") }

        let enforcing = try client(
            try PinSet(pattern: localhost, pins: pins, hardExpiry: (yesterday, .keepEnforcing))
        )
        await expectCode(.pinMismatch) { _ = try await enforcing.send("GET", "https://localhost:\(mitm.port)/hello") }

        let lapsed = try client(try PinSet(pattern: localhost, pins: pins, hardExpiry: (yesterday, .reportOnly)))
        #expect(try await lapsed.send("GET", "https://localhost:\(mitm.port)/hello").text == "hello from mitm")
        #expect(await lapsed.lastPinEvaluation[try Origin("https://localhost:\(mitm.port)")]?.decision == .allowReported)
        #expect(mitm.requestCount == 1, "only the lapsed, report-only set let a request through")
    }

    @Test func anExpiredCertificateIsRefusedEvenWithAMatchingPin() async throws {
        let expired = try pki.leaf(
            notBefore: Date().addingTimeInterval(-10 * 86_400),
            notAfter: Date().addingTimeInterval(-86_400)
        )
        let server = try await TLSTestServer.start(name: "expired", chainPEM: expired.chainPEM, keyPEM: expired.keyPEM)
        Cleanup.after { await server.stop() }
        let client = try client(ports: [server.port], pins: [try expired.pin, try backupPin()])
        await expectCode(.certificateExpired) { _ = try await client.send("GET", "https://localhost:\(server.port)/hello") }
        #expect(server.requestCount == 0)
    }

    @Test func aWrongHostCertificateIsRefusedEvenWithAMatchingPin() async throws {
        let elsewhere = try pki.leaf(hosts: ["api.example.org"])
        let server = try await TLSTestServer.start(name: "wrong-host", chainPEM: elsewhere.chainPEM, keyPEM: elsewhere.keyPEM)
        Cleanup.after { await server.stop() }
        let client = try client(ports: [server.port], pins: [try elsewhere.pin, try backupPin()])
        await expectCode(.hostnameMismatch) { _ = try await client.send("GET", "https://localhost:\(server.port)/hello") }
        #expect(server.requestCount == 0)
    }

    @Test func aChainFromAnUntrustedCAIsRefusedEvenWithAMatchingPin() async throws {
        let stranger = try TestPKI(name: "Stranger CA").leaf()
        let server = try await TLSTestServer.start(name: "stranger", chainPEM: stranger.chainPEM, keyPEM: stranger.keyPEM)
        Cleanup.after { await server.stop() }
        let client = try client(ports: [server.port], pins: [try stranger.pin, try backupPin()])
        await expectCode(.certificateUntrusted) { _ = try await client.send("GET", "https://localhost:\(server.port)/hello") }
        #expect(server.requestCount == 0)
    }

    @Test func otherOriginsAndRedirectsElsewhereAreRefusedBeforeAnythingIsSent() async throws {
        let other = try await TLSTestServer.start(name: "other", chainPEM: genuine.chainPEM, keyPEM: genuine.keyPEM)
        let server = try await TLSTestServer.start(
            name: "genuine",
            chainPEM: genuine.chainPEM,
            keyPEM: genuine.keyPEM,
            redirect: "https://localhost:\(other.port)/hello"
        )
        Cleanup.after { await server.stop(); await other.stop() }
        let client = try client(ports: [server.port], pins: [try genuine.pin, try backupPin()])
        await client.useSigner(
            MessageSigner(key: try SigningKey.generate(.ed25519), keyID: "device", algorithm: Ed25519Algorithm())
        )
        await expectCode(.originNotAllowed) { _ = try await client.send("GET", "https://localhost:\(other.port)/hello") }
        await expectCode(.originNotAllowed) { _ = try await client.send("GET", "http://localhost:\(server.port)/hello") }
        // Userinfo in an https URL is refused before any origin is looked at (RFC 9110 §4.2.4).
        await expectCode(.malformedMessage) {
            _ = try await client.send("GET", "https://user:pw@localhost:\(server.port)/hello")
        }
        await expectCode(.originNotAllowed) { _ = try await client.send("GET", "https://localhost:\(server.port)/redirect") }
        #expect(server.requestCount == 1, "the redirect itself was answered")
        #expect(other.requestCount == 0, "nothing, signed or not, went to the redirect target")
    }
}
