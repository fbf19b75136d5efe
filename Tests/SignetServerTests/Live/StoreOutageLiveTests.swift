// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import Logging
import NIOHTTP1
import SignetCore
import SignetServer
import SignetTestSupport
import Synchronization
import Testing

/// PostgreSQL stopped under load, as in an operator's first outage: signed requests are answered
/// `503 store_unavailable` with `Retry-After` within `storeTimeoutMilliseconds` and never reach
/// the upstream afterwards, `/readyz` says so within its bound, the outage and the recovery are
/// logged whatever the level, and once the server is back requests are served again.
@Suite(.awaitsCleanups, .timeLimit(.minutes(2))) struct StoreOutageLiveTests {
    struct Outcome: Sendable {
        var name: String
        var status: Int
        var reason: String?
        var retryAfter: String?
        var sent: ContinuousClock.Instant
        var took: Duration
    }

    /// What the clients saw, and whether they still send.
    final class Load: Sendable {
        let outcomes = Mutex<[Outcome]>([])
        let sending = Atomic<Bool>(true)
    }

    static let timeout = 1000

    @Test(.enabled(if: TestPostgres.url != nil, "no PostgreSQL server (SIGNET_POSTGRES_URL)"))
    func aPostgreSQLOutageIsRefusedFastNeverForwardedLateAndRecovered() async throws {
        let server = try await TestPostgres.Server.start()
        Cleanup.after { await server.remove() }
        let logs = CapturedLogs()
        let harness = try await GatewayHarness.start(store: .postgres(server.url), logger: logs.logger(level: .error)) {
            $0.storeTimeoutMilliseconds = Self.timeout
            $0.debug = false
        }
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.ed25519)

        // Four clients send signed scores one after another, each named, until told to stop.
        let state = Load()
        let load = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<4 {
                    group.addTask {
                        var sequence = 0
                        while state.sending.load(ordering: .relaxed) {
                            sequence += 1
                            let name = "c\(client)-\(sequence)"
                            let message = try device.signer.sign(
                                try harness.scorePost(#"{"name":"\#(name)","score":1}"#),
                                created: Date(),
                                nonce: Nonce.random()
                            )
                            let sent = ContinuousClock.now
                            let answer = try await GatewayHarness.send(message)
                            let outcome = Outcome(
                                name: name,
                                status: answer.status,
                                reason: answer.reason,
                                retryAfter: answer.headers.first(name: "Retry-After"),
                                sent: sent,
                                took: ContinuousClock.now - sent
                            )
                            state.outcomes.withLock { $0.append(outcome) }
                            if answer.status != 201 { try await Task.sleep(for: .milliseconds(20)) }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        try await Task.sleep(for: .seconds(1))
        try await server.stop()
        let stopped = ContinuousClock.now

        // Down: readiness says so within its bound.
        try await Task.sleep(for: .milliseconds(300))
        let probed = ContinuousClock.now
        let ready = try await GatewayHarness.send(method: "GET", url: harness.base + "/readyz")
        #expect(ready.status == 503 && ready.json["store"] as? String == "unavailable", "\(ready.text)")
        #expect(ContinuousClock.now - probed < .seconds(3))
        // An outage longer than a request's time for the store, so that waiting it out shows.
        try await Task.sleep(for: .seconds(4))

        try await server.restart()
        let restarted = ContinuousClock.now
        // Back: requests are served again once the store answers.
        var recovered = false
        for _ in 0..<150 where !recovered {
            try await Task.sleep(for: .milliseconds(100))
            recovered = state.outcomes.withLock { $0.contains { $0.sent > restarted && $0.status == 201 } }
        }
        state.sending.store(false, ordering: .relaxed)
        try await load.value
        #expect(recovered, "served again within 15 s of the restart")

        let all = state.outcomes.withLock { $0 }
        // Every answer within the store's time and a margin for this machine, never the outage's length.
        let slowest = all.map(\.took).max() ?? .zero
        #expect(slowest < .milliseconds(Self.timeout) + .milliseconds(1500), "slowest answer: \(slowest)")
        // While the server was down every answer was the store's refusal, with when to come back.
        let duringOutage = all.filter { $0.sent > stopped + .milliseconds(100) && $0.sent + $0.took < restarted }
        #expect(duringOutage.count >= 8, "\(duringOutage.count) requests during the outage")
        #expect(duringOutage.allSatisfy { $0.status == 503 && $0.reason == "store_unavailable" && $0.retryAfter == "1" })
        #expect(all.allSatisfy { $0.status == 201 || $0.reason == "store_unavailable" }, "\(Set(all.map { "\($0.status) \($0.reason ?? "")" }))")

        // Exactly the accepted requests reached the upstream: none of the refused ones, late.
        try await Task.sleep(for: .seconds(2))
        let arrived = Set(harness.backend.allEntries.map(\.name))
        let accepted = Set(all.filter { $0.status == 201 }.map(\.name))
        #expect(arrived == accepted, "forwarded though refused: \(arrived.subtracting(accepted).sorted())")

        var ready2 = try await GatewayHarness.send(method: "GET", url: harness.base + "/readyz")
        for _ in 0..<30 where ready2.status != 200 {
            try await Task.sleep(for: .milliseconds(200))
            ready2 = try await GatewayHarness.send(method: "GET", url: harness.base + "/readyz")
        }
        #expect(ready2.status == 200, "\(ready2.text)")
        let said = logs.all.filter { $0.message.hasPrefix("the store") }.map(\.level)
        #expect(said.first == .warning && said.contains(.notice), "\(logs.all.map(\.message))")
    }
}
