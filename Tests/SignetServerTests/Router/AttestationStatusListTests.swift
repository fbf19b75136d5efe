// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import Logging
import NIOCore
import SignetAndroid
import SignetCore
@testable import SignetServer
import SignetSimulator
import SignetTestSupport
import Synchronization
import Testing
import X509

/// Google's revocation list fetched in the background from a stand-in of Google's status URL: until
/// a list has been fetched, registrations wait (503 `attestation_status_unavailable`, the challenge
/// not spent); once fetched, a revoked batch is refused; when later fetches fail, the last good
/// copy stays in force.
@Suite(.awaitsCleanups) struct AttestationStatusListTests {
    /// What the stand-in answers: a status code and a body.
    final class Answer: Sendable {
        let state = Mutex((503, "{}"))
        func set(_ status: Int, _ body: String) { state.withLock { $0 = (status, body) } }
    }

    /// Serves what `answer` holds.
    static func statusServer(_ answer: Answer) async throws -> BackgroundServer {
        var logger = Logger(label: "signet.test.status")
        logger.logLevel = .error
        let router = Router()
        router.get("/attestation/status") { _, _ -> Response in
            let (status, body) = answer.state.withLock { $0 }
            return Response(
                status: .init(code: status),
                headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: body))
            )
        }
        return try await BackgroundServer.start(logger: logger) { running in
            Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await running($0.localAddress?.port ?? 0) },
                logger: logger
            )
        }
    }

    @Test func registrationsFollowTheFetchedList() async throws {
        let answer = Answer()
        let google = try await Self.statusServer(answer)
        Cleanup.after { await google.stop() }
        let revokedBatch = try GatewayHarness.androidCA.issueBatch()
        let harness = try await GatewayHarness.start(transport: .router) {
            $0.development = true  // a fetch a second, for the test
            $0.androidAttestation?.statusList = .init(url: "http://127.0.0.1:\(google.port)/attestation/status")
            $0.androidAttestation?.statusList?.refreshSeconds = 1
            $0.androidAttestation?.statusList?.maximumAgeSeconds = 3600
        }
        Cleanup.after { try await harness.stop() }
        func register(_ device: SimulatedAndroidDevice, challenge: String? = nil) async throws -> GatewayHarness.Answer {
            try await harness.attestAndroid(device, challenge: challenge)
        }
        // Not fetched yet (the stand-in answers 503): refused before the challenge is spent.
        let challenge = try await harness.challenge()
        let waiting = try await register(AndroidGatewayTests.android(), challenge: challenge)
        #expect(waiting.status == 503 && waiting.reason == "attestation_status_unavailable", "\(waiting.text)")

        // The stand-in now serves a list revoking one batch; the fetcher retries and gets it.
        let serial = revokedBatch.certificate.serialNumber.bytes.map { String(format: "%02x", $0) }.joined()
        answer.set(200, #"{"entries": {"\#(serial)": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}}}"#)
        var accepted = try await register(AndroidGatewayTests.android(), challenge: challenge)
        for _ in 0..<50 where accepted.status == 503 {
            try await Task.sleep(for: .milliseconds(100))
            accepted = try await register(AndroidGatewayTests.android(), challenge: challenge)
        }
        #expect(accepted.status == 201, "the challenge was kept for the retry: \(accepted.text)")
        #expect(try await register(AndroidGatewayTests.android(batch: revokedBatch)).reason == "attestation_revoked")

        // Google unreachable from now on: the last good list stays in force, across a reload too.
        answer.set(500, "")
        try await Task.sleep(for: .milliseconds(2_500))
        #expect(try await register(AndroidGatewayTests.android()).status == 201)
        #expect(try await register(AndroidGatewayTests.android(batch: revokedBatch)).reason == "attestation_revoked")
        try harness.gateways[0].reloader.reload(to: harness.gateway.configuration)
        #expect(try await register(AndroidGatewayTests.android(batch: revokedBatch)).reason == "attestation_revoked")
        // Moving the list to another URL takes a restart (the fetcher runs from start).
        var moved = harness.gateway.configuration
        moved.androidAttestation?.statusList?.url = "http://127.0.0.1:1/elsewhere"
        let refused = #expect(throws: ConfigurationError.self) { try harness.gateways[0].reloader.reload(to: moved) }
        #expect(refused?.kind == .restartRequired && refused?.path == "androidAttestation.statusList")
    }

    /// Past `maximumAgeSeconds` without a good fetch, the list is not trusted; a failed fetch keeps
    /// the last good copy within that age; before any fetch, nothing is trusted.
    @Test func aListOlderThanAllowedIsNotTrusted() throws {
        let now = Mutex(Date(timeIntervalSince1970: 1_764_000_000))
        let cache = AttestationStatusCache(maximumAge: 60, clock: { now.withLock { $0 } })
        #expect(throws: SignetError.self) { try cache.current() }
        cache.failed("connection refused")
        let never = #expect(throws: SignetError.self) { try cache.current() }
        #expect(never?.code == .attestationStatusUnavailable && never?.reason.contains("connection refused") == true)
        cache.store(AttestationStatusList(entries: ["1a": .init(status: "REVOKED")]))
        now.withLock { $0 += 30 }
        cache.failed("timed out")
        #expect(try cache.current().entries.count == 1)
        now.withLock { $0 += 31 }
        let stale = #expect(throws: SignetError.self) { try cache.current() }
        #expect(stale?.code == .attestationStatusUnavailable)
        // A list the operator keeps in a file never goes stale.
        let kept = AttestationStatusCache(maximumAge: nil, clock: { now.withLock { $0 } })
        kept.store(AttestationStatusList())
        now.withLock { $0 += 86_400 * 365 }
        #expect(try kept.current().entries.isEmpty)
    }
}
