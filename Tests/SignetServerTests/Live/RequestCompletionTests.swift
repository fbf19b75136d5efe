// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SignetCore
import SignetServer
import SignetStore
import SignetTestSupport
import Testing

/// A request is judged when it is complete, on real connections: its body must end within the
/// request deadline, a client that goes away mid-body is logged as its own doing, and per-client
/// connection limits hold. (Held requests, reloads and head-time refusals are router tests:
/// RequestCompletionRouterTests.)
@Suite(.awaitsCleanups) struct RequestCompletionTests {
    static let bank = MessageSigner(
        key: try! SigningKey(secret: GatewayHarness.bankSecret),
        keyID: "bank-v1",
        algorithm: HMACSHA256()
    )

    /// A signed POST to `/scores` as raw bytes, cut after its head and `held` bytes of its body.
    static func signedScore(_ harness: GatewayHarness, created: Date = Date(), held: Int = 4) throws -> (head: [UInt8], rest: [UInt8]) {
        let message = try HTTPMessage.request(
            method: "POST",
            uri: harness.base + "/scores",
            fields: [("Content-Type", "application/json")],
            body: Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
        )
        let raw = Array(GatewayHardeningTests.raw(try bank.sign(message, created: created, nonce: Nonce.random())).utf8)
        let cut = try #require(raw.firstRange(of: Array("\r\n\r\n".utf8))).upperBound + held
        return (Array(raw[..<cut]), Array(raw[cut...]))
    }


    @Test func aBodyThatTricklesPastTheDeadlineIs408AndNeverForwarded() async throws {
        let harness = try await GatewayHarness.start { $0.requestTimeoutSeconds = 1 }
        Cleanup.after { try await harness.stop() }
        let (head, rest) = try Self.signedScore(harness)
        let connection = try await RawConnection.open(port: harness.port)
        try await connection.send(head)
        // One byte every 300 ms keeps every idle timer happy; the deadline is not one.
        for byte in rest.prefix(8) {
            try? await connection.send([byte])
            try await Task.sleep(for: .milliseconds(300))
        }
        let answer = try await connection.response(timeout: .seconds(5))
        #expect(RawHTTP.status(answer) == 408, "\(answer)")
        #expect(RawHTTP.reason(answer) == "request_too_slow", "\(answer)")
        #expect(await connection.isClosed(within: .seconds(2)))
        #expect(harness.backend.receivedCount == 0)
    }




    /// Only the time the gateway reads counts against a body's deadline: a pipelined request
    /// whose large body the client sent at once waits, unread, while a slow upstream serves the
    /// request before it — longer than the deadline — and is then read and forwarded, not refused.
    @Test func aPipelinedBodyIsNotTimedWhileTheGatewayHoldsItsReads() async throws {
        let (upstream, harness) = try await MisbehavingUpstream.behindGateway(.slow(.milliseconds(1500))) { $0.requestTimeoutSeconds = 1 }
        let body = [UInt8](repeating: UInt8(ascii: "a"), count: 512 * 1024)
        let first = Array("GET /open/first HTTP/1.1\r\nHost: gw\r\n\r\n".utf8)
        let second = Array("POST /open/second HTTP/1.1\r\nHost: gw\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        let connection = try await RawConnection.open(port: harness.port)
        try await connection.send(first + second)
        let answers = try await connection.responses(2, timeout: .seconds(10))
        #expect(answers.components(separatedBy: "HTTP/1.1 200").count - 1 == 2, "\(answers.prefix(600))")
        #expect(!answers.contains("request_too_slow"), "\(answers.prefix(600))")
        #expect(upstream.seen.map(\.target) == ["/open/first", "/open/second"])
        await connection.close()
    }

    /// The held time is the gateway's only while the client can be written to: a client that does
    /// not read the answer that holds its pipelined request's body cannot stretch that body's
    /// deadline. The body's rest, sent after the deadline however long the client stopped reading,
    /// is refused `request_too_slow` — after the answer before it, whole — and never forwarded,
    /// nor is a request sent after it.
    @Test func aClientThatStopsReadingCannotStretchAPipelinedBodysDeadline() async throws {
        let size = 16 << 20
        let (upstream, harness) = try await MisbehavingUpstream.behindGateway(.large(size)) { $0.requestTimeoutSeconds = 1 }
        let body = [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024)
        let first = Array("GET /open/first HTTP/1.1\r\nHost: gw\r\n\r\n".utf8)
        let second = Array("POST /open/second HTTP/1.1\r\nHost: gw\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
        let connection = try await RawConnection.open(port: harness.port, reading: false)
        // The second's head and a little of its body come in the read that brings the first.
        try await connection.send(first + second + body.prefix(1024))
        // Three deadlines long, the client reads nothing of the first's answer.
        try await Task.sleep(for: .seconds(3))
        try await connection.resumeReading()
        // The late body's rest, and a whole request after it: neither is read on.
        try? await connection.send(Array(body.dropFirst(1024)) + Array("GET /open/third HTTP/1.1\r\nHost: gw\r\n\r\n".utf8))
        let answers = try await connection.responses(2, timeout: .seconds(20))
        let statuses = answers.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
        #expect(statuses.first == "200", "\(answers.prefix(300))")
        #expect(answers.utf8.count > size, "the first answer is cut short: \(answers.utf8.count) bytes")
        #expect(statuses == ["200", "408"], "\(statuses)")
        #expect(await connection.isClosed(within: .seconds(5)))
        #expect(upstream.seen.map(\.target) == ["/open/first"])
        await connection.close()
    }

    /// After a `408` the connection lingers — its output closed, what the client still sends read
    /// and dropped — for `RequestDeadlineHandler.lingerTime` (2 s) at most: a client that ignores the
    /// end and goes on sending, its body then more requests, is cut off then, and nothing it sent
    /// is forwarded. (Closed at once, its next bytes would meet a reset: the `408` at risk.)
    @Test func aLingeringConnectionEndsInItsTimeHoweverItsClientSends() async throws {
        let harness = try await GatewayHarness.start { $0.requestTimeoutSeconds = 1 }
        Cleanup.after { try await harness.stop() }
        let (head, rest) = try Self.signedScore(harness)
        let connection = try await RawConnection.open(port: harness.port, ignoringTheEnd: true)
        try await connection.send(head)
        let answer = try await connection.response(timeout: .seconds(5))
        let answered = ContinuousClock.now
        #expect(RawHTTP.status(answer) == 408, "\(answer)")
        var closedAfter: Duration?
        for index in 0..<80 {
            let bytes = index < rest.count ? [rest[index]] : Array("GET /health HTTP/1.1\r\nHost: gw\r\n\r\n".utf8)
            try? await connection.send(bytes)
            if !connection.isOpen {
                closedAfter = ContinuousClock.now - answered
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let closed = try #require(closedAfter, "still open 8 s after its 408")
        let linger = Duration.seconds(2)  // RequestDeadlineHandler.lingerTime
        #expect(closed >= linger - .milliseconds(500) && closed < linger + .seconds(2), "closed \(closed) after its 408")
        #expect(harness.backend.receivedCount == 0)
    }

    @Test func aClientThatGoesAwayMidBodyIsLoggedAsItsOwnNot500() async throws {
        let logs = CapturedLogs()
        let harness = try await GatewayHarness.start(logger: logs.logger(level: .info))
        Cleanup.after { try await harness.stop() }
        let (head, _) = try Self.signedScore(harness)
        let connection = try await RawConnection.open(port: harness.port)
        try await connection.send(head)
        try await Task.sleep(for: .milliseconds(200))
        await connection.close()
        var line: CapturedLogs.Line?
        for _ in 0..<50 where line == nil {
            try await Task.sleep(for: .milliseconds(100))
            line = logs.all.first { $0.message == "request" && $0.metadata["route"] == "/" }
        }
        let entry = try #require(line, "no access log line")
        #expect(entry.metadata["status"] == "499")
        #expect(entry.metadata["reason"] == "client_closed_request")
        #expect(!logs.all.contains { $0.level >= .error })
    }

    /// A client that gives up while its request is judged (its store slow) has retried with a fresh
    /// nonce, or will not learn the outcome: its request is never forwarded afterwards.
    @Test func aClientThatGoesAwayWhileItsRequestIsJudgedIsNeverForwarded() async throws {
        var quiet = Logger(label: "signet.test")
        quiet.logLevel = .critical
        let (backend, backendServer) = try await GatewayHarness.startBackend(logger: quiet)
        Cleanup.after { await backendServer.stop() }
        var configuration = GatewayConfiguration(upstream: "http://127.0.0.1:\(backendServer.port)")
        configuration.listen.port = 0
        configuration.store = .memory
        configuration.routes = [.init(prefix: "/", access: .verified)]
        configuration.sharedSecrets = [.init(keyId: "bank-v1", secretBase64: Base64.encode(GatewayHarness.bankSecret))]
        let store = InterceptedStore.stalling()
        let gateway = try SignetGateway(configuration: configuration, store: store, logger: quiet)
        let server = try await BackgroundServer.start(logger: quiet) { gateway.application(onServerRunning: $0) }
        Cleanup.after { await server.stop() }
        func signed() throws -> [UInt8] {
            let message = try HTTPMessage.request(
                method: "POST",
                uri: "http://127.0.0.1:\(server.port)/scores",
                fields: [("Content-Type", "application/json")],
                body: Array("{\"name\":\"Gilgamesh\",\"score\":100}".utf8)
            )
            return Array(GatewayHardeningTests.raw(try Self.bank.sign(message, created: Date(), nonce: Nonce.random())).utf8)
        }

        store.interceptor.stall()
        let leaving = try await RawConnection.open(port: server.port)
        try await leaving.send(try signed())
        // Its nonce claim waits on the store; the client goes; then the store answers.
        for _ in 0..<100 where !store.interceptor.operations.contains("nonce_claim") {
            try await Task.sleep(for: .milliseconds(20))
        }
        await leaving.close()
        // Time for the gateway to read the end of input (a loaded machine takes a while).
        try await Task.sleep(for: .milliseconds(500))
        store.interceptor.release()
        try await Task.sleep(for: .milliseconds(500))
        #expect(backend.receivedCount == 0)

        // One whose request and close come together, before the gateway has read either.
        store.interceptor.stall()
        let hasty = try await RawConnection.open(port: server.port)
        try await hasty.send(try signed())
        await hasty.close()
        try await Task.sleep(for: .milliseconds(500))
        store.interceptor.release()
        try await Task.sleep(for: .milliseconds(500))
        #expect(backend.receivedCount == 0)

        // One that stays is forwarded.
        let staying = try await RawConnection.open(port: server.port)
        try await staying.send(try signed())
        let answer = try await staying.response()
        #expect(RawHTTP.status(answer) == 201, "\(answer)")
        #expect(backend.receivedCount == 1)
    }

    /// Behind a trusted balancer every connection is the balancer's: each client's requests in
    /// progress are what is bounded.
    @Test func behindTrustedProxiesAClientPastItsLimitIsRefusedAndOthersServed() async throws {
        let harness = try await GatewayHarness.start {
            $0.trustedProxies = ["127.0.0.1/32"]
            $0.maxConnectionsPerClient = 1
        }
        Cleanup.after { try await harness.stop() }
        func head(_ client: String, length: Int) -> [UInt8] {
            Array("GET /scores/top HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: \(client)\r\nContent-Length: \(length)\r\nConnection: close\r\n\r\n".utf8)
        }
        let slow = try await RawConnection.open(port: harness.port)
        try await slow.send(head("203.0.113.9", length: 10))
        try await Task.sleep(for: .milliseconds(200))
        let again = try await RawConnection.open(port: harness.port)
        try await again.send(head("203.0.113.9", length: 0))
        let refused = try await again.response()
        #expect(RawHTTP.status(refused) == 429 && RawHTTP.reason(refused) == "connection_limit", "\(refused)")
        let other = try await RawConnection.open(port: harness.port)
        try await other.send(Array("GET /scores/top HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.10\r\nConnection: close\r\n\r\n".utf8))
        #expect(RawHTTP.status(try await other.response()) == 200)
        await slow.close()
    }

    @Test func connectionsPastAClientsLimitAreClosedAndOthersStillServed() async throws {
        let harness = try await GatewayHarness.start { $0.maxConnectionsPerClient = 4 }
        Cleanup.after { try await harness.stop() }
        var open: [RawConnection] = []
        for _ in 0..<4 { open.append(try await RawConnection.open(port: harness.port)) }
        // Each holds a request open, as a slow client would.
        for connection in open { try await connection.send(Array("POST /scores/top HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n".utf8)) }
        open.append(try await RawConnection.open(port: harness.port))
        // One of the five is closed at once: the one the gateway counted fifth. Connections are
        // accepted on several event loops, so under load that is not always the last one opened
        // (the test failed under the full suite waiting for the last one alone).
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline, open.allSatisfy(\.isOpen) { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(open.filter { !$0.isOpen }.count == 1, "one connection past the limit is closed, the others kept")
        open.removeAll { !$0.isOpen }
        // One closes: the client may open another, once the gateway has seen the close (on a
        // loaded machine, not within a fixed moment: the test failed so after 200 ms).
        await open.removeFirst().close()
        var status: Int?
        let retry = ContinuousClock.now + .seconds(5)
        while status != 200, ContinuousClock.now < retry {
            try await Task.sleep(for: .milliseconds(100))
            let again = try await RawConnection.open(port: harness.port)
            try? await again.send(Array("GET /scores/top HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            status = RawHTTP.status(try await again.response(timeout: .seconds(2)))
            await again.close()
        }
        #expect(status == 200)
        for connection in open { await connection.close() }
    }

    /// What one unauthenticated connection may cost (docs/operations.md): a head and the body bytes it
    /// has sent, nothing more — held here for 200 connections, each a head announcing 1 MiB on an
    /// open route and one byte of it, measured as the resident memory of a `signet serve` process
    /// (its own: other tests share this one).
    @Test func anUnauthenticatedConnectionCostsItsHeadAndTheBytesItSent() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-rss-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let config: [String: Any] = [
            "upstream": "http://127.0.0.1:9",
            "listen": ["host": "127.0.0.1", "port": 0],
            "store": ["sqlite": folder.appendingPathComponent("signet.sqlite").path],
            "routes": [["prefix": "/echo", "access": "open"]],
            "maxConnectionsPerClient": 1000,
        ]
        let configPath = folder.appendingPathComponent("signet.json").path
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
        let serve = try await ServeProcess(config: configPath, folder: folder)
        Cleanup.after {
            serve.kill()
            try? FileManager.default.removeItem(at: folder)
        }
        let head = Array("POST /echo/upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 1048576\r\n\r\nx".utf8)
        // Warm up: the allocator's arenas and the event loops' buffers exist before the measurement.
        var warm: [RawConnection] = []
        for _ in 0..<50 { warm.append(try await RawConnection.open(port: serve.port)) }
        for connection in warm { try await connection.send(head) }
        try await Task.sleep(for: .milliseconds(300))
        for connection in warm { await connection.close() }
        try await Task.sleep(for: .milliseconds(300))
        let before = Self.residentBytes(of: serve.process.processIdentifier)
        var open: [RawConnection] = []
        for _ in 0..<200 { open.append(try await RawConnection.open(port: serve.port)) }
        for connection in open { try await connection.send(head) }
        try await Task.sleep(for: .milliseconds(500))
        let perConnection = (Self.residentBytes(of: serve.process.processIdentifier) - before) / open.count
        #expect(before > 0 && perConnection <= Self.unauthenticatedConnectionBudget, "\(perConnection) bytes per connection")
        for connection in open { await connection.close() }
    }

    /// The figure docs/operations.md states (measured 2026-11-27, a `signet serve` debug build).
    static let unauthenticatedConnectionBudget = 48 * 1024

    static func residentBytes(of process: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}

/// One raw HTTP/1.1 connection to a server, written in parts at the test's pace.
final class RawConnection: Sendable {
    private let channel: any Channel
    private let collected: NIOLockedValueBox<[UInt8]>

    private init(channel: any Channel, collected: NIOLockedValueBox<[UInt8]>) {
        self.channel = channel
        self.collected = collected
    }

    /// A connection to `port`; one opened not `reading` reads nothing until ``resumeReading()``,
    /// as a client that does not take its answers: what the gateway writes waits in the sockets'
    /// buffers, then in the gateway.
    /// One opened `ignoringTheEnd` stays open when the gateway closes its output, as a client that
    /// goes on sending regardless.
    static func open(port: Int, reading: Bool = true, ignoringTheEnd: Bool = false) async throws -> RawConnection {
        let collected = NIOLockedValueBox<[UInt8]>([])
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: reading)
            .channelOption(.allowRemoteHalfClosure, value: ignoringTheEnd)
        // A small window: the gateway's writes stop early.
        if !reading { bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: 16 * 1024) }
        let channel = try await bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RawHTTP.Collector(collected: collected))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return RawConnection(channel: channel, collected: collected)
    }

    func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// What came back once a whole response (head and `Content-Length` body) is in, or the
    /// connection closed, or `timeout` passed.
    func response(timeout: Duration = .seconds(10)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let closed = !channel.isActive
            let text = String(decoding: collected.withLockedValue { $0 }, as: UTF8.self)
            if Self.isComplete(text) || closed { return text }
            try await Task.sleep(for: .milliseconds(20))
        }
        return String(decoding: collected.withLockedValue { $0 }, as: UTF8.self)
    }

    /// Everything received so far, once it holds `answers` responses' status lines (or the
    /// connection closed, or `timeout` passed).
    func responses(_ answers: Int, timeout: Duration = .seconds(10)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var text = ""
        while ContinuousClock.now < deadline {
            // Whether it closed is asked first: what came before the close is all in by then.
            let closed = !channel.isActive
            text = String(decoding: collected.withLockedValue { $0 }, as: UTF8.self)
            if text.components(separatedBy: "HTTP/1.1 ").count - 1 >= answers || closed { return text }
            try await Task.sleep(for: .milliseconds(20))
        }
        return text
    }

    var isOpen: Bool { channel.isActive }

    func resumeReading() async throws {
        try await channel.setOption(.autoRead, value: true).get()
    }

    func isClosed(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !channel.isActive { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return !channel.isActive
    }

    func close() async {
        try? await channel.close()
    }

    private static func isComplete(_ text: String) -> Bool {
        guard let end = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<end.lowerBound].lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return text[end.upperBound...].utf8.count >= length
    }
}
