// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOHTTP1

/// How the gateway ends an HTTP/1.1 connection with an answer, as nginx's `lingering_close` does —
/// after a `408` (``RequestDeadlineHandler``), after a request that switches NIO's parser off
/// (``ProtocolSwitchHandler``), after a parser refusal (``ParserErrorResponder``).
///
/// A handler in front of the HTTP/1 decoder, behind TLS. Once in place, every byte read is dropped
/// there — nothing more is parsed, kept or handed on — while reads are still asked for only by the
/// handlers after it (which pace the client as before). ``close(closingOutput:)`` then closes the
/// output (NIO does once what was written is flushed) and reads on, dropping, until the client
/// closes its side or ``time`` passes (on TLS, NIOSSL then waits up to its own shutdown timeout
/// for the client's `close_notify`). Closed at once with input still coming, the socket would answer that
/// input with a reset, and a client's kernel may drop on a reset what its program has not read yet
/// — the answer among it (RFC 9112 §9.6).
final class LingeringClose: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// How long a closing connection's input is read and dropped before it is closed whole.
    static let time: TimeAmount = .seconds(2)

    private var context: ChannelHandlerContext?
    private var end: Scheduled<Void>?

    /// Input dropped from now on, on the connection of `context` (a handler of its pipeline);
    /// `nil` where there is no HTTP/1 decoder (an HTTP/2 stream).
    @discardableResult
    static func drain(_ context: ChannelHandlerContext) -> LingeringClose? {
        let operations = context.pipeline.syncOperations
        if let existing = try? operations.handler(type: LingeringClose.self) { return existing }
        guard let decoder = try? operations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return nil }
        let drain = LingeringClose()
        guard (try? operations.addHandler(drain, position: .before(decoder.handler))) != nil else { return nil }
        return drain
    }

    /// Ends the connection of `context` lingering, its output closed here unless another handler
    /// did (`closingOutput` false); where there is nothing to linger on (an HTTP/2 stream), at once.
    static func begin(_ context: ChannelHandlerContext, closingOutput: Bool = true) {
        guard let drain = drain(context) else { return context.close(promise: nil) }
        drain.close(closingOutput: closingOutput)
    }

    /// Writes and flushes `data`, the connection's last answer part, then ends the connection
    /// lingering; at once, should the write fail.
    static func writeLast(_ data: NIOAny, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        let written = promise ?? context.eventLoop.makePromise()
        context.writeAndFlush(data, promise: written)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { result in
            guard case .success = result else { return loopBound.value.close(promise: nil) }
            begin(loopBound.value)
        }
    }

    private func close(closingOutput: Bool) {
        guard end == nil, let context else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        end = context.eventLoop.scheduleTask(in: Self.time) { loopBound.value.close(promise: nil) }
        if closingOutput {
            context.close(mode: .output).whenFailure { error in
                // Closed already is what was asked for; anything else, the connection goes whole.
                if case ChannelError.outputClosed = error { return }
                loopBound.value.close(promise: nil)
            }
        }
        if context.channel.isActive { context.read() }
    }

    /// The connection is closing: it reads on by itself, to drop what comes.
    private var closing: Bool { end != nil }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end?.cancel()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func channelReadComplete(context: ChannelHandlerContext) {
        // Passed on: what the decoder yielded in the read that installed this is delivered on it
        // (Hummingbird's channel hands parts on at the end of a read).
        context.fireChannelReadComplete()
        if closing { context.read() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Before the closing answer, a client's end of input is the handlers' to judge (one that
        // half-closes still reads an answer under way).
        if closing, case ChannelEvent.inputClosed = event { return context.close(promise: nil) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        end?.cancel()
        context.fireChannelInactive()
    }
}
