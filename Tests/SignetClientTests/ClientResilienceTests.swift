// SPDX-License-Identifier: Apache-2.0
import Foundation
@testable import SignetClient
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// What a phone's network and clock do to requests: a clock set hours wrong, a gateway that is
/// down or refusing for a moment. The client learns the gateway's time and retries what is safe
/// to retry — never a request the upstream may have executed, unless its method is idempotent.
@Suite(.awaitsCleanups) struct ClientResilienceTests {
    static func post(_ client: SignetClient, _ base: String) async throws -> ClientResponse {
        try await AppAttestLifecycleTests.post(client, base, score: 7)
    }

    /// A phone twenty minutes ahead: every signature would be `created_in_future`. The gateway's
    /// `Date` teaches the client the offset; a request refused for its time is signed again at once.
    /// (Its certificate checks keep the device's clock, as the system's TLS does.)
    @Test func aPhoneWithAWrongClockSignsAtTheGatewaysTime() async throws {
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS)
        Cleanup.after { try await harness.stop() }
        let ahead: @Sendable () -> Date = { Date() + 1_200 }
        let registering = try harness.client(clock: ahead)
        try await registering.register(using: SoftwareKeyProvider())
        #expect(abs(await registering.clockOffset + 1_200) <= 5, "learned from the challenge's answer")
        #expect(try await Self.post(registering, harness.base).status == 201)

        // A client that has not heard from the gateway yet: refused once for its time, then accepted.
        let fresh = try harness.client(clock: ahead)
        await fresh.useSigner(try #require(await registering.signer))
        #expect(await fresh.clockOffset == 0)
        #expect(try await Self.post(fresh, harness.base).status == 201)
        #expect(abs(await fresh.clockOffset + 1_200) <= 5)

        // A right clock keeps no offset at all.
        let right = try harness.client()
        try await right.register(using: SoftwareKeyProvider())
        #expect(await right.clockOffset == 0)
    }

    /// The gateway answers `upstream_unreachable` without forwarding: worth retrying for any method,
    /// each try signed anew (a new nonce), as many times as the policy allows.
    @Test func aRefusalBeforeForwardingIsRetriedWithBackoffEachTrySignedAnew() async throws {
        let logs = CapturedLogs()
        let harness = try await GatewayHarness.start(tls: GatewayHarness.developmentTLS, logger: logs.logger()) {
            $0.upstream = "http://127.0.0.1:1"  // nothing listens there
        }
        Cleanup.after { try await harness.stop() }
        let client = try harness.client(retry: RequestRetry(attempts: 3, initialDelay: .milliseconds(20)))
        try await client.register(using: SoftwareKeyProvider())
        let answer = try await Self.post(client, harness.base)
        #expect(answer.status == 502 && answer.reason == "upstream_unreachable")
        let tries = logs.all.filter { $0.message == "request" && $0.metadata["route"] == "/" }
        #expect(tries.count == 3, "\(tries.map(\.metadata))")
        #expect(tries.allSatisfy { $0.metadata["reason"] == "upstream_unreachable" })

        let once = try harness.client(retry: .none)
        await once.useSigner(try #require(await client.signer))
        #expect(try await Self.post(once, harness.base).status == 502)
        #expect(logs.all.filter { $0.message == "request" && $0.metadata["route"] == "/" }.count == 4)
    }

    /// Nothing listens: no connection, so nothing was sent — retried for any method, then the
    /// failure reaches the app.
    @Test func aFailedConnectionIsRetriedThenReported() async throws {
        var configuration = SignetClientConfiguration(origins: [try Origin("http://127.0.0.1:1")])
        configuration.retry = RequestRetry(attempts: 3, initialDelay: .milliseconds(10))
        configuration.transport = .nio()
        let client = try SignetClient(configuration: configuration)
        let started = ContinuousClock.now
        let error = await #expect(throws: SignetError.self) {
            _ = try await client.send("POST", "http://127.0.0.1:1/scores", body: [1])
        }
        #expect(error?.code == .connectionFailed)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    // MARK: The policy

    /// An answer; a `reason` comes in the gateway's problem+json unless `problem` is false.
    static func answer(_ status: Int, reason: String? = nil, retryAfter: String? = nil, problem: Bool = true) -> ClientResponse {
        var fields = MessageFields()
        if let retryAfter { fields.append(name: "Retry-After", value: retryAfter) }
        if reason != nil { fields.append(name: "Content-Type", value: problem ? "application/problem+json" : "application/json") }
        let body = reason.map { Array(#"{"reason":"\#($0)"}"#.utf8) } ?? []
        return ClientResponse(status: status, fields: fields, body: body)
    }

    @Test func whatIsRetriedDependsOnWhetherTheUpstreamMayHaveExecutedIt() {
        let retry = RequestRetry(attempts: 3, initialDelay: .milliseconds(100), maximumDelay: .seconds(2))
        // A 503 from behind the gateway: only idempotent methods.
        #expect(retry.wait(after: Self.answer(503), method: "POST", failures: 1) == nil)
        #expect(retry.wait(after: Self.answer(503), method: "GET", failures: 1) != nil)
        #expect(retry.wait(after: Self.answer(503, reason: "upstream_unavailable"), method: "PATCH", failures: 1) == nil)
        // The gateway's own refusals before forwarding: any method.
        for reason in ["store_unavailable", "nonce_store_full", "upstream_unreachable", "rate_limited", "connection_limit"] {
            let status = SignetError.Code(rawValue: reason)!.httpStatus
            #expect(retry.wait(after: Self.answer(status, reason: reason), method: "POST", failures: 1) != nil, "\(reason)")
        }
        // Only the gateway's own refusal says it did not forward: an upstream body that happens to
        // carry the word, or a reason answered with another status, is not one.
        #expect(retry.wait(after: Self.answer(503, reason: "store_unavailable", problem: false), method: "POST", failures: 1) == nil)
        #expect(retry.wait(after: Self.answer(500, reason: "store_unavailable"), method: "POST", failures: 1) == nil)
        #expect(Self.answer(401, reason: "unknown_key", problem: false).gatewayRefusal == nil)
        #expect(Self.answer(401, reason: "unknown_key").gatewayRefusal == .unknownKey)
        // Retry-After is taken as given, up to the longest wait; an HTTP-date is not guessed at.
        #expect(retry.wait(after: Self.answer(503, reason: "store_unavailable", retryAfter: "1"), method: "POST", failures: 1) == .seconds(1))
        #expect(retry.wait(after: Self.answer(503, reason: "store_unavailable", retryAfter: "30"), method: "POST", failures: 1) == nil)
        #expect(RequestRetry.retryAfterSeconds("Fri, 27 Nov 2026 15:00:00 GMT") == nil)
        #expect(RequestRetry.retryAfterSeconds("-1") == nil && RequestRetry.retryAfterSeconds(" 2 ") == 2)
        // Not past the attempts; not for answers that are the client's to act on.
        #expect(retry.wait(after: Self.answer(503), method: "GET", failures: 3) == nil)
        #expect(retry.wait(after: Self.answer(401, reason: "signature_invalid"), method: "GET", failures: 1) == nil)
        #expect(RequestRetry.none.wait(after: Self.answer(503), method: "GET", failures: 1) == nil)

        let unsent = ClientTransportFailure.unsent(SignetError(.connectionFailed, "refused"))
        let broken = ClientTransportFailure(SignetError(.connectionFailed, "reset"))!
        #expect(retry.wait(afterFailure: unsent, method: "POST", failures: 1) != nil)
        #expect(retry.wait(afterFailure: broken, method: "POST", failures: 1) == nil)
        #expect(retry.wait(afterFailure: broken, method: "PUT", failures: 2) != nil)
        #expect(ClientTransportFailure(SignetError(.pinMismatch, "pins")) == nil, "a refused chain is never retried")
    }

    @Test func backoffDoublesUnderItsCapWithFullJitter() {
        let retry = RequestRetry(attempts: 8, initialDelay: .milliseconds(100), maximumDelay: .seconds(1))
        #expect(retry.delay(afterFailures: 1, random: 1) == .milliseconds(100))
        #expect(retry.delay(afterFailures: 2, random: 1) == .milliseconds(200))
        #expect(retry.delay(afterFailures: 3, random: 0.5) == .milliseconds(200))
        #expect(retry.delay(afterFailures: 7, random: 1) == .seconds(1))
        #expect(retry.delay(afterFailures: 2, random: 0) == .zero)
        for failures in 1...8 {
            #expect(retry.delay(afterFailures: failures) <= .seconds(1))
        }
    }

    @Test func theOffsetComesFromAnIMFFixdateAndIgnoresRoundingAndLatency() throws {
        let date = try #require(ClockOffset.parseIMFFixdate("Fri, 27 Nov 2026 15:10:32 GMT"))
        #expect(date.timeIntervalSince1970 == 1_795_792_232)
        #expect(ClockOffset.parseIMFFixdate("Sun, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970 == 784_111_777)
        #expect(ClockOffset.parseIMFFixdate("Mon, 06 Nov 1994 08:49:37 GMT") == nil, "the weekday must agree")
        #expect(ClockOffset.parseIMFFixdate("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        #expect(ClockOffset.parseIMFFixdate("Fri, 27 Nov 2026 25:10:32 GMT") == nil)
        #expect(ClockOffset.parseIMFFixdate("Fri, 27 Nov 2026 15:10:32 UTC") == nil)
        // Sent and answered within a second of the gateway's time: no offset.
        let sent = date + 0.2
        #expect(ClockOffset.estimate(date: "Fri, 27 Nov 2026 15:10:32 GMT", sent: sent, received: sent + 0.3) == 0)
        // Two hours behind.
        let behind = date - 7_200
        #expect(ClockOffset.estimate(date: "Fri, 27 Nov 2026 15:10:32 GMT", sent: behind, received: behind + 0.1) == 7_200)
        #expect(ClockOffset.estimate(date: "yesterday", sent: sent, received: sent) == nil)
    }
}
