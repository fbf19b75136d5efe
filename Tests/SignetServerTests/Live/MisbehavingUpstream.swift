// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import SignetServer
import SignetTestSupport

/// An upstream on loopback that behaves as real backends do at their worst, and records what
/// reached it.
///
/// - `echo`: reads the whole request, answers `200` with the request line and header lines (`204`
///   without a length for a target ending `/204`; a `HEAD` its length without a body, or no length
///   for a target ending `/no-length`).
/// - `earlyAnswer`: answers `200 ok` as soon as the head arrives, never reads the body, keeps the
///   socket open half a second (legal HTTP: a 401 or 413 from a backend looks the same).
/// - `reset`: resets the connection (RST) as soon as the head arrives.
/// - `slow`: waits before answering the whole request.
/// - `large`: answers with a body of that many bytes, written at once.
/// - `mixed`: each of the above by the request path (`early`, `reset`, `slow` in it; else echo).
final class MisbehavingUpstream: Sendable {
    enum Behaviour: Sendable {
        /// `chunked`: answers in many small chunks written at once, then the end (one read for the gateway).
        case echo, earlyAnswer, reset, mixed, chunked
        case slow(TimeAmount)
        case large(Int)

        func resolved(for target: String) -> Behaviour {
            guard case .mixed = self else { return self }
            if target.contains("early") { return .earlyAnswer }
            if target.contains("reset") { return .reset }
            if target.contains("slow") { return .slow(.milliseconds(200)) }
            return .echo
        }
    }

    struct Seen: Sendable {
        var method: String
        var target: String
        var headers: [(String, String)]
        func values(_ name: String) -> [String] {
            headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
        }
    }

    let port: Int
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let seenBox: NIOLockedValueBox<[Seen]>
    var seen: [Seen] { seenBox.withLockedValue { $0 } }

    private init(port: Int, channel: any Channel, group: MultiThreadedEventLoopGroup, seen: NIOLockedValueBox<[Seen]>) {
        self.port = port
        self.channel = channel
        self.group = group
        self.seenBox = seen
    }

    static func start(_ behaviour: Behaviour) async throws -> MisbehavingUpstream {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let seen = NIOLockedValueBox<[Seen]>([])
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                    try channel.pipeline.syncOperations.addHandler(Handler(behaviour: behaviour, seen: seen))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return MisbehavingUpstream(port: channel.localAddress!.port!, channel: channel, group: group, seen: seen)
    }

    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let configured: Behaviour
        var behaviour: Behaviour
        let seen: NIOLockedValueBox<[Seen]>
        var head: HTTPRequestHead?
        var answered = false

        init(behaviour: Behaviour, seen: NIOLockedValueBox<[Seen]>) {
            self.configured = behaviour
            self.behaviour = behaviour
            self.seen = seen
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                answered = false
                behaviour = configured.resolved(for: head.uri)
                seen.withLockedValue {
                    $0.append(Seen(method: head.method.rawValue, target: head.uri, headers: head.headers.map { ($0.name, $0.value) }))
                }
                switch behaviour {
                case .earlyAnswer:
                    answer(context: context, body: "ok", close: false)
                    let channel = context.channel
                    context.eventLoop.scheduleTask(in: .milliseconds(500)) { channel.close(promise: nil) }
                case .reset:
                    // SO_LINGER 0: close sends RST instead of FIN.
                    let channel = context.channel
                    if let provider = channel as? any SocketOptionProvider {
                        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
                    } else {
                        channel.close(promise: nil)
                    }
                default: break
                }
            case .body: break
            case .end:
                guard let head, !answered else { return }
                let text = ([head.method.rawValue + " " + head.uri] + head.headers.map { "\($0.name): \($0.value)" })
                    .joined(separator: "\n")
                switch behaviour {
                case .echo where head.method == .HEAD && head.uri.hasSuffix("/no-length"):
                    // A HEAD answer whose GET would be chunked: no length at all, then closed.
                    answered = true
                    let fields = HTTPHeaders([("Connection", "close")])
                    context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: fields))), promise: nil)
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                case .echo where head.uri.hasSuffix("/204"):
                    // No content, and so no Content-Length (RFC 9110 §8.6).
                    answered = true
                    context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .noContent))), promise: nil)
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                case .echo: answer(context: context, body: text, close: false)
                case .chunked:
                    answered = true
                    var headers = HTTPHeaders([("Transfer-Encoding", "chunked"), ("Content-Type", "text/plain")])
                    headers.add(name: "X-Target", value: head.uri)
                    context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                    for index in 0..<40 {
                        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "part \(index)\n")))), promise: nil)
                    }
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                case .large(let size):
                    answered = true
                    let headers = HTTPHeaders([("Content-Length", String(size)), ("Content-Type", "text/plain")])
                    context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                    let body = context.channel.allocator.buffer(repeating: UInt8(ascii: "x"), count: size)
                    context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                case .slow(let delay):
                    let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                    context.eventLoop.scheduleTask(in: delay) {
                        let (handler, context) = loopBound.value
                        handler.answer(context: context, body: text, close: false)
                    }
                default: break
                }
            }
        }

        func answer(context: ChannelHandlerContext, body: String, close: Bool) {
            guard context.channel.isActive else { return }
            answered = true
            var headers = HTTPHeaders([("Content-Length", String(body.utf8.count)), ("Content-Type", "text/plain")])
            if close { headers.add(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            // A HEAD answer has the length of the GET's body and no body (RFC 9110 §9.3.2).
            if head?.method != .HEAD {
                context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

/// Raw bytes to a server and whatever comes back until it closes (or the time is up): for request
/// targets and framings an HTTP client library would refuse or rewrite.
enum RawHTTP {
    static func exchange(port: Int, _ request: String, timeout: TimeAmount = .seconds(10)) async throws -> String {
        try await exchange(port: port, bytes: Array(request.utf8), timeout: timeout)
    }

    /// The same with the request as bytes (a binary PROXY protocol header, invalid UTF-8).
    static func exchange(port: Int, bytes request: [UInt8], timeout: TimeAmount = .seconds(10)) async throws -> String {
        let group = MultiThreadedEventLoopGroup.singleton
        let collected = NIOLockedValueBox<[UInt8]>([])
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(collected: collected))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await channel.writeAndFlush(ByteBuffer(bytes: request))
        let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        try? await channel.closeFuture.get()
        deadline.cancel()
        return String(decoding: collected.withLockedValue { $0 }, as: UTF8.self)
    }

    /// The status code of the first response in `raw`.
    static func status(_ raw: String) -> Int? {
        let parts = raw.split(separator: " ", maxSplits: 2)
        return parts.count >= 2 ? Int(parts[1]) : nil
    }

    /// The `reason` member of a problem+json body in `raw`.
    static func reason(_ raw: String) -> String? {
        guard let range = raw.range(of: "\r\n\r\n") else { return nil }
        let body = Data(raw[range.upperBound...].utf8)
        return (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["reason"] as? String
    }

    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let collected: NIOLockedValueBox<[UInt8]>
        init(collected: NIOLockedValueBox<[UInt8]>) { self.collected = collected }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            collected.withLockedValue { $0 += Array(buffer.readableBytesView) }
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
    }
}

extension MisbehavingUpstream {
    /// An upstream behaving so, and a gateway whose `/open` routes go to it (`adjust`ed last), both
    /// stopped when the test ends.
    static func behindGateway(
        _ behaviour: Behaviour,
        adjust: @escaping (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> (MisbehavingUpstream, GatewayHarness) {
        let upstream = try await start(behaviour)
        Cleanup.after { await upstream.stop() }
        let harness = try await GatewayHarness.start {
            $0.upstream = "http://127.0.0.1:\(upstream.port)"
            $0.routes.insert(.init(prefix: "/open", access: .open), at: 0)
            adjust(&$0)
        }
        Cleanup.after { try await harness.stop() }
        return (upstream, harness)
    }
}
