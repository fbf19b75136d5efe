// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Ends an HTTP/1.1 connection with the answer to a request that asks to switch protocols — a
/// `CONNECT`, or any request naming `Upgrade` — and reads nothing after that request.
///
/// The gateway switches no protocol (`Upgrade` is hop-by-hop: ``ForwardedFields`` removes it, and
/// the request is answered as any other). But NIO's HTTP/1 parser stops parsing after such a
/// request, as it would for a protocol handler to take over, and its decoder then keeps every byte
/// that comes: without this, one unauthenticated `CONNECT` (answered `400`) or an `Upgrade` on an
/// `open` route, followed by a stream of bytes, held them all in memory for as long as the
/// connection lived (128 MiB sent, 130 MiB more resident). nginx without an upgrade configuration
/// ignores `Upgrade` and parses on; the parser here cannot, so the connection ends instead.
///
/// First of the handlers after the HTTP codecs, so every handler's `read` passes through it.
final class ProtocolSwitchHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Heads read and final answers ended on this connection (answers go in order).
    private var headsRead = 0
    private var answersEnded = 0
    /// The request that asks to switch protocols: the connection ends with the answer that ends
    /// this many.
    private var lastAnswer: Int?
    /// That request ended: the parser reads no further, and so nothing more is read.
    private var stopped = false

    /// Whether NIO's parser stops after `head` (llhttp's upgrade: a `CONNECT`, or `Upgrade` with
    /// `Connection: upgrade`), taken wider — any `Upgrade` — so no spelling of `Connection` slips by.
    static func switchesProtocols(_ head: HTTPRequest) -> Bool {
        head.method == .connect || head.headerFields[.upgrade] != nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Whatever came in the read that brought the request's end is not the client's to send.
        guard !stopped else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            headsRead += 1
            if lastAnswer == nil, Self.switchesProtocols(head) { lastAnswer = headsRead }
        case .end:
            if lastAnswer == headsRead { stopped = true }
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        guard !stopped else { return }
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        answersEnded += 1
        guard answersEnded == lastAnswer else { return context.write(data, promise: promise) }
        let written = promise ?? context.eventLoop.makePromise()
        context.writeAndFlush(data, promise: written)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
    }
}
