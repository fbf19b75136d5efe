// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Ends an HTTP/1.1 connection with the answer to a request that asks to switch protocols — a
/// `CONNECT`, or any request naming `Upgrade` — and drops every byte that comes after that request.
///
/// The gateway switches no protocol (`Upgrade` is hop-by-hop: ``ForwardedFields`` removes it, and
/// the request is answered as any other). But NIO's HTTP/1 parser stops parsing after such a
/// request, as it would for a protocol handler to take over, and its decoder then keeps every byte
/// that comes: without this, one unauthenticated `CONNECT` (answered `400`) or an `Upgrade` on an
/// `open` route, followed by a stream of bytes, held them all in memory for as long as the
/// connection lived (128 MiB sent, 130 MiB more resident). nginx without an upgrade configuration
/// ignores `Upgrade` and parses on; the parser here cannot, so the connection ends instead.
///
/// Once that request has ended, ``LingeringClose`` in front of the decoder drops what comes, so
/// reads go on (a client that leaves is still seen) and cost nothing; the answer says
/// `Connection: close`, and the connection then closes lingering (``LingeringClose``).
/// An HTTP/2 stream has no HTTP/1 parser (and refuses `Upgrade`): there it passes everything on.
/// First of the handlers after the HTTP codecs.
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
    /// That request ended: the parser reads no further, and what comes is dropped.
    private var stopped = false
    private var onStream = false

    /// Whether NIO's parser stops after `head` (llhttp's upgrade: a `CONNECT`, or `Upgrade` with
    /// `Connection: upgrade`), taken wider — any `Upgrade` — so no spelling of `Connection` slips by.
    static func switchesProtocols(_ head: HTTPRequest) -> Bool {
        head.method == .connect || head.headerFields[.upgrade] != nil
    }

    func handlerAdded(context: ChannelHandlerContext) {
        onStream = context.channel.isHTTP2Stream
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Whatever came in the read that brought the request's end is not the client's to send.
        guard !stopped else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            headsRead += 1
            if !onStream, lastAnswer == nil, Self.switchesProtocols(head) { lastAnswer = headsRead }
        case .end:
            if lastAnswer == headsRead { stop(context: context) }
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    /// The parser is done: bytes are dropped before they reach it from now on.
    private func stop(context: ChannelHandlerContext) {
        stopped = true
        if LingeringClose.drain(context) == nil { context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // What the parser made of bytes after the switching request is no one's concern.
        guard !stopped else { return }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where lastAnswer == answersEnded + 1 && head.status.kind != .informational:
            // The client learns that nothing more is read here.
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            answersEnded += 1
            guard answersEnded == lastAnswer else { return context.write(data, promise: promise) }
            LingeringClose.writeLast(data, promise: promise, context: context)
        default:
            context.write(data, promise: promise)
        }
    }
}
