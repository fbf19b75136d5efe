// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import NIOPosix
import SignetClient
import SignetCore
import Testing

/// Servers that answer before they have the whole request: the SDK hands over their answer, never
/// a connection failure in its place, and never reuses the connection.
struct EarlyAnswerTests {
    /// Answers as soon as it has a request head, never reads the body, keeps the socket half a
    /// second, then closes it; every connection gets the same answer.
    final class EarlyServer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let answer: String

        init(answer: String) { self.answer = answer }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            // The first read holds the head (a client writes it first, in one segment on loopback).
            context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer)), promise: nil)
            let channel = context.channel
            channel.eventLoop.scheduleTask(in: .milliseconds(500)) { channel.close(promise: nil) }
        }
    }

    static func serve(_ answer: String) async throws -> (port: Int, stop: @Sendable () async -> Void) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EarlyServer(answer: answer)) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        return (port, { try? await channel.close(); try? await group.shutdownGracefully() })
    }

    @Test func aRefusalSentBeforeTheBodyIsReadReachesTheCaller() async throws {
        let server = try await Self.serve(
            "HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big\n"
        )
        let base = "http://127.0.0.1:\(server.port)"
        let client = try SignetClient(configuration: .init(origins: [try Origin(base)], pinReportPath: nil))
        // 64 MiB: more than loopback's socket buffers hold, so the write is still going when the server closes.
        let body = [UInt8](repeating: 0x61, count: 64 << 20)
        for _ in 0..<3 {
            let answer = try await client.send("POST", base + "/upload", body: body, sign: false)
            #expect(answer.status == 413 && answer.text == "too big\n")
        }
        await client.closeConnections()
        await server.stop()
    }

    @Test func anHTTP10ServerThatClosesAfterTheHeadStillAnswersEveryRequest() async throws {
        let server = try await Self.serve("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
        let base = "http://127.0.0.1:\(server.port)"
        let client = try SignetClient(configuration: .init(origins: [try Origin(base)], pinReportPath: nil))
        // One after another, as fast as they go: each needs a new connection.
        for index in 0..<300 {
            let answer = try await client.send("GET", base + "/\(index)", sign: false)
            #expect(answer.status == 200 && answer.text == "ok\n")
        }
        await client.closeConnections()
        await server.stop()
    }
}
