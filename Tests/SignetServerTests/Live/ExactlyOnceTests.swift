// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import ExampleScores
import Foundation
import NIOCore
import NIOHTTP1
import SignetCore
import SignetPostgres
import SignetMiddleware
import SignetServer
import SignetSimulator
import SignetStore
import SignetTestSupport
import Testing

/// One signed request, copied 1,000 times and sent at once over sockets to two instances on one
/// PostgreSQL: exactly one copy may reach the backend. (One gateway on SQLite: ExactlyOnceRouterTests.)
@Suite(.awaitsCleanups) struct ExactlyOnceTests {
    static let copies = 1000

    /// Sends `copies` copies of `message`, spread over the gateways, all at once; returns the statuses.
    static func storm(_ message: HTTPMessage, gateways: [String]) async throws -> [String: Int] {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        // A copy waits for one of the 64 connections; the whole suite on two cores can keep it
        // waiting past the 10 s default, which is a slow machine, not a lost copy.
        configuration.timeout = .init(connect: .seconds(60), read: .seconds(60))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        Cleanup.after { try? await client.shutdown() }
        let target = message.target!
        let path = target.pathValue + (target.query.map { "?" + $0 } ?? "")
        let headers = message.fields.lines.filter { $0.name.lowercased() != "content-length" }
        let body = message.body
        return try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<copies {
                let url = gateways[index % gateways.count] + path
                group.addTask {
                    var request = HTTPClientRequest(url: url)
                    request.method = .POST
                    for field in headers { request.headers.add(name: field.name, value: field.value) }
                    request.body = .bytes(ByteBuffer(bytes: body))
                    let response = try await client.execute(request, timeout: .seconds(60))
                    let body = try await response.body.collect(upTo: 1 << 16)
                    let problem = try? JSONSerialization.jsonObject(with: Data(Array(buffer: body))) as? [String: Any]
                    return "\(response.status.code) \(problem?["reason"] as? String ?? "")"
                }
            }
            var statuses: [String: Int] = [:]
            for try await status in group { statuses[status, default: 0] += 1 }
            return statuses
        }
    }

    @Test(.enabled(if: TestPostgres.url != nil, "no PostgreSQL server (SIGNET_POSTGRES_URL)"))
    func twoGatewaysSharingPostgreSQLLetExactlyOneCopyThrough() async throws {
        let server = try #require(TestPostgres.url)
        let url = try await PostgresStore.createDatabase(
            url: server,
            named: "signet_race_\(UInt64.random(in: 0...UInt64.max))"
        )
        // Both instances sit behind one public name, as behind a load balancer.
        let harness = try await GatewayHarness.start(store: .postgres(url), instances: 2) {
            $0.debug = false
            $0.publicAuthority = "api.example.com"
        }
        Cleanup.after { try await harness.stop() }
        // The device registers on one instance and is known to the other through the shared store.
        let device = try await harness.register(gateway: 0)
        let request = try HTTPMessage.request(
            method: "POST",
            uri: "http://api.example.com/scores",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
        )
        let signed = try device.signer.sign(request, created: Date(), nonce: Nonce.random())
        let statuses = try await Self.storm(signed, gateways: [harness.url(0), harness.url(1)])
        #expect(statuses["201 "] == 1, "\(statuses)")
        #expect(statuses["401 nonce_replayed"] == Self.copies - 1, "\(statuses)")
        #expect(harness.backend.receivedCount == 1)
    }

    @Test(.enabled(if: TestPostgres.url != nil, "no PostgreSQL server (SIGNET_POSTGRES_URL)"))
    func oneAppAttestAssertionIsAcceptedOnceAcrossTwoInstances() async throws {
        let server = try #require(TestPostgres.url)
        let url = try await PostgresStore.createDatabase(
            url: server,
            named: "signet_attest_\(UInt64.random(in: 0...UInt64.max))"
        )
        let harness = try await GatewayHarness.start(store: .postgres(url), instances: 2) {
            $0.debug = false
            $0.publicAuthority = "api.example.com"
        }
        Cleanup.after { try await harness.stop() }
        let device = SimulatedAppAttestDevice(appID: GatewayHarness.appID, ca: GatewayHarness.simulatorCA)
        #expect(try await harness.attest(device, gateway: 1).status == 201)
        let request = try HTTPMessage.request(
            method: "POST",
            uri: "http://api.example.com/scores",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
        )
        let signed = try SimulatedAppAttestSigner(device: device).sign(request, created: Date(), nonce: Nonce.random())
        let statuses = try await Self.storm(signed, gateways: [harness.url(0), harness.url(1)])
        #expect(statuses["201 "] == 1, "\(statuses)")
        #expect(statuses["401 nonce_replayed"] == Self.copies - 1, "\(statuses)")
        #expect(harness.backend.receivedCount == 1)
        // The next assertion (counter 2) with a fresh nonce is accepted; the stored counter moved.
        let next = try SimulatedAppAttestSigner(device: device).sign(request, created: Date(), nonce: Nonce.random())
        #expect(try await GatewayHarness.send(next.sent(to: harness.url(0))).status == 201)
    }
}
