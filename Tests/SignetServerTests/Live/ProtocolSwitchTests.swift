// SPDX-License-Identifier: Apache-2.0
import Foundation
import NIOCore
import SignetServer
import SignetTestSupport
import Testing

/// A request that asks to switch protocols ends its connection with its answer: the gateway
/// switches none, and NIO's parser reads nothing after one, so every byte sent after it would be
/// kept (``ProtocolSwitchHandler``). The invariant: after such a request, what a client sends costs
/// the gateway nothing and reaches no one, and the connection ends within the lingering time.
@Suite(.awaitsCleanups) struct ProtocolSwitchTests {
    @Test(arguments: [
        ("GET /open/socket HTTP/1.1\r\nHost: gw\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", 200, ["/open/socket"]),
        ("GET /open/h2c HTTP/1.1\r\nHost: gw\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n", 200, ["/open/h2c"]),
        ("CONNECT gw:443 HTTP/1.1\r\nHost: gw:443\r\n\r\n", 400, []),
    ])
    func aRequestThatAsksToSwitchProtocolsEndsItsConnection(request: String, status: Int, forwarded: [String]) async throws {
        let (upstream, harness) = try await MisbehavingUpstream.behindGateway(.echo)
        // A client that ignores the end of the gateway's output and streams on.
        let connection = try await RawConnection.open(port: harness.port, ignoringTheEnd: true)
        // A request pipelined after it is never read.
        try await connection.send(Array((request + "GET /open/after HTTP/1.1\r\nHost: gw\r\n\r\n").utf8))
        let answer = try await connection.response(timeout: .seconds(5))
        #expect(RawHTTP.status(answer) == status, "\(answer.prefix(300))")
        #expect(answer.lowercased().contains("\r\nconnection: close\r\n"), "\(answer.prefix(300))")
        // What it streams is dropped in front of the parser (which kept every byte before), and
        // the connection ends lingering, in its time.
        let chunk = [UInt8](repeating: UInt8(ascii: "z"), count: 256 * 1024)
        for _ in 0..<60 where connection.isOpen {
            try? await connection.send(chunk)
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!connection.isOpen, "still open 6 s after its answer")
        #expect(upstream.seen.map(\.target) == forwarded)
        await connection.close()
    }
}
