// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PropertyBased
import SignetCore
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// A store that stops answering, as a PostgreSQL server that went away does: requests that need it
/// are refused `503 store_unavailable` with `Retry-After` within `storeTimeoutMilliseconds`, never
/// forwarded, then at once while it stays down; routes that need no store keep serving; readiness
/// says so within its bound; the outage and the recovery are logged once each and counted.
@Suite(.awaitsCleanups, .timeLimit(.minutes(1))) struct StoreOutageRouterTests {
    static let timeout = 300

    static func gateway(_ upstream: RecordingUpstream, store: any SignetStorage, logs: CapturedLogs) throws -> SignetGateway {
        var configuration = GatewayConfiguration(upstream: "http://upstream.test")
        configuration.store = .memory
        configuration.storeTimeoutMilliseconds = timeout
        configuration.routes = [.init(prefix: "/public", access: .open), .init(prefix: "/", access: .verified)]
        configuration.publicAuthority = "localhost"
        configuration.sharedSecrets = [.init(keyId: "bank-v1", secretBase64: Base64.encode(GatewayHarness.bankSecret))]
        configuration.adminToken = GatewayHarness.adminToken
        // At `error`, as an operator who wants quiet logs: the outage is said all the same.
        return try SignetGateway(configuration: configuration, store: store, logger: logs.logger(level: .error), upstream: upstream)
    }

    static func post(_ client: some TestClientProtocol, _ path: String = "/orders") async throws -> (TestResponse, Duration) {
        let (fields, body) = try ForwardedRequestRouterTests.signed("POST", path, body: #"{"n":1}"#)
        let started = ContinuousClock.now
        let answer = try await client.execute(uri: path, method: .post, headers: fields, body: body)
        return (answer, ContinuousClock.now - started)
    }

    static func metrics(_ client: some TestClientProtocol) async throws -> String {
        let answer = try await client.execute(
            uri: "/metrics",
            method: .get,
            headers: [.authorization: "Bearer \(GatewayHarness.adminToken)"]
        )
        return String(buffer: answer.body)
    }

    @Test func aStoreThatStopsAnsweringIsRefusedWithinItsTimeAndNothingIsForwardedLate() async throws {
        let upstream = try RecordingUpstream()
        upstream.answerEveryRequest(.respond(status: .created, fields: [], body: []))
        let store = InterceptedStore.stalling()
        let logs = CapturedLogs()
        let gateway = try Self.gateway(upstream, store: store, logs: logs)
        let bound = Duration.milliseconds(Self.timeout) + .seconds(2)
        try await gateway.application().test(.router) { client in
            #expect(try await Self.post(client).0.status == .created)
            #expect(upstream.received.count == 1)

            store.interceptor.stall()
            // The first request waits out its time, then is refused with when to come back.
            let (first, waited) = try await Self.post(client)
            #expect(first.status == .serviceUnavailable && ForwardedRequestRouterTests.reason(first) == "store_unavailable")
            #expect(first.headers[.retryAfter] == "1")
            #expect(waited >= .milliseconds(Self.timeout) && waited < bound, "\(waited)")
            // While it stays down, requests are refused without asking it: six at once, of which
            // only a probe (one every 250 ms; two, should a loaded machine spread them) waits for
            // the store. Counted by the gateway, not timed.
            func refusedWithoutAsking() async throws -> Int {
                let metrics = try await Self.metrics(client)
                return Int(metrics.firstMatch(of: /signet_store_failures_total\{kind="refused"\} (\d+)/)?.1 ?? "0") ?? 0
            }
            let refusedBefore = try await refusedWithoutAsking()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        let (answer, took) = try await Self.post(client)
                        #expect(answer.status == .serviceUnavailable && ForwardedRequestRouterTests.reason(answer) == "store_unavailable")
                        #expect(took < bound, "\(took)")
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await refusedWithoutAsking() - refusedBefore >= 4, "refused at once while the store is down")
            // What needs no store is served.
            let open = try await client.execute(uri: "/public/status", method: .get)
            #expect(open.status == .created)
            // Readiness says so, within its own bound.
            let started = ContinuousClock.now
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .serviceUnavailable && String(buffer: ready.body).contains(#""store":"unavailable""#))
            #expect(ContinuousClock.now - started < .seconds(2) + bound)
            let down = try await Self.metrics(client)
            #expect(down.contains("signet_store_up 0"), "\(down)")
            #expect(down.contains(#"signet_store_failures_total{kind="timeout"}"#) && down.contains(#"signet_store_failures_total{kind="refused"}"#))

            // The stalled operations finish late — the nonces they claim are burnt — and none of
            // their requests reaches the upstream.
            store.interceptor.release()
            try await Task.sleep(for: .milliseconds(100))
            #expect(upstream.received.count == 2, "the first request and the open one only")

            // It answers again: the next probe brings it back.
            var recovered = false
            for _ in 0..<40 where !recovered {
                recovered = try await Self.post(client).0.status == .created
                if !recovered { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(recovered)
            #expect(try await Self.metrics(client).contains("signet_store_up 1"))
        }
        let said = logs.all.filter { $0.message.hasPrefix("the store") }
        #expect(said.map(\.level) == [.warning, .notice], "\(said.map(\.message))")
        #expect(said.first?.message.contains("503 store_unavailable") == true)
        #expect(said.last?.metadata["refused_operations"].flatMap(Int.init).map { $0 >= 4 } == true)
    }

    /// SQLite is not raced (it bounds its own waits), but an answer it gives past the request's time
    /// is refused all the same: a nonce claim held by another process's write lock for 3 s,
    /// against a time of 300 ms, is `store_unavailable` and never forwarded.
    @Test func aSQLiteAnswerPastTheRequestsTimeIsRefusedAndNotForwarded() async throws {
        let harness = try await GatewayHarness.start(transport: .router) { $0.storeTimeoutMilliseconds = Self.timeout }
        Cleanup.after { try await harness.stop() }
        // Registered before the lock is taken, each try within the same 300 ms: on a loaded
        // machine the first reads (the server secret) can take longer, which is not under test.
        var registered: GatewayHarness.Device?
        for attempt in 1...5 where registered == nil {
            do {
                registered = try await harness.register()
            } catch where attempt < 5 {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let device = try #require(registered)
        let database = try #require(harness.gateway.configuration.store.sqlite)
        let locked = harness.folder.appendingPathComponent("locked").path
        // Another process takes SQLite's write lock for 3 s, and says when it holds it.
        let holder = Task {
            try await SignetProcess.run(
                "python3",
                [
                    "-c",
                    "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE'); open(sys.argv[2],'w').close(); time.sleep(3.0); c.execute('COMMIT')",
                    database, locked,
                ]
            )
        }
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: locked) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(FileManager.default.fileExists(atPath: locked))
        let before = harness.backend.receivedCount
        let signed = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        let answer = try await GatewayHarness.send(signed)
        #expect(answer.status == 503 && answer.reason == "store_unavailable", "\(answer.status) \(answer.text)")
        #expect((try await holder.value).status == 0)
        try await Task.sleep(for: .milliseconds(200))
        #expect(harness.backend.receivedCount == before)
    }

    /// The invariant, over random requests whose store operations each answer at once or never:
    /// a request is answered within its time for the store (all its operations together), refused
    /// `store_unavailable` exactly when one of them did not answer, and forwarded only when none
    /// failed to.
    @Test func aRequestWaitsForTheStoreNoLongerThanItsTimeInAll() async throws {
        let upstream = try RecordingUpstream()
        upstream.answerEveryRequest(.respond(status: .created, fields: [], body: []))
        let store = InterceptedStore.stalling()
        let gateway = try Self.gateway(upstream, store: store, logs: CapturedLogs())
        let bound = Duration.milliseconds(Self.timeout) + .seconds(2)
        try await gateway.application().test(.router) { client in
            await propertyCheck(count: 12, input: Gen.bool.array(of: 1...4)) { stalls in
                for stalled in stalls {
                    let before = upstream.received.count
                    if stalled { store.interceptor.stall() }
                    let (answer, took) = try! await Self.post(client)
                    store.interceptor.release()
                    #expect(took < bound, "\(took)")
                    if stalled {
                        #expect(answer.status == .serviceUnavailable && ForwardedRequestRouterTests.reason(answer) == "store_unavailable")
                    } else if answer.status != .created {
                        // Only while the store is still taken to be down, between two probes.
                        #expect(ForwardedRequestRouterTests.reason(answer) == "store_unavailable")
                    }
                    try! await Task.sleep(for: .milliseconds(20))
                    #expect(upstream.received.count == before + (answer.status == .created ? 1 : 0))
                }
            }
        }
    }
}
