// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// How an exchange with the upstream failed; the proxy turns each into a reason code.
package enum UpstreamFailure: Error, Sendable, Equatable {
    /// No connection could be made: refused, no route, name not found.
    case unreachable
    /// The connection closed or reset before a response head arrived (a failed TLS handshake too).
    case closedBeforeAnswer
    /// No connection, no response head or, while a body streams, no next part within the timeout;
    /// or a reader that stopped reading for ``UpstreamExchangeHandler/stalledReader``.
    case timedOut
    /// As many upstream connections are open as the gateway allows.
    case saturated
    /// The connection ended in the middle of the response body.
    case brokeOff
}

/// The upstream's answer: its head, then its body as it arrives — or whole, when it came complete
/// in the read that brought its head (most small answers), or from a recording upstream in router
/// tests.
package struct UpstreamResponse: Sendable {
    typealias Stream = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark,
        UpstreamExchangeHandler.Demand
    >
    enum Body: Sendable {
        case stream(Stream)
        case buffered(ByteBuffer)
    }

    var head: HTTPResponse
    var body: Body

    init(head: HTTPResponse, body: Body) {
        self.head = head
        self.body = body
    }

    /// A whole answer, as a recording upstream gives it.
    package init(head: HTTPResponse, body: ByteBuffer) {
        self.init(head: head, body: .buffered(body))
    }
}

/// One exchange at a time on one upstream connection: writes the request, hands the response head
/// to the waiting proxy and the body to whoever reads it, with backpressure — a slow client slows
/// the reads from the upstream instead of filling the gateway's memory.
///
/// The proxy speaks HTTPTypes; the handler converts at the wire, once each way: the request to
/// HTTP/1's head as it is written, the response head as it is read. (Not through
/// `HTTP1ToHTTPClientCodec`: a response's HTTP version decides whether the connection may carry
/// another request — an HTTP/1.0 answer without keep-alive ends it — and `HTTPResponse` has none.)
///
/// A connection goes back to the pool only when the whole request was written, the whole response
/// read, and both sides keep it alive: an upstream that answered before reading the body (legal,
/// and what a 401 or 413 looks like) has not consumed the rest, which must not become the start
/// of the next request.
final class UpstreamExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private enum State {
        case idle
        case awaitingHead(EventLoopPromise<UpstreamResponse>)
        /// The head is here and the body's parts read with it are kept, until the read ends: an
        /// answer that ends in it goes out whole (the client gets head and body in one write, and
        /// no stream is made); otherwise it streams from there.
        case collecting(EventLoopPromise<UpstreamResponse>, HTTPResponse, ByteBuffer)
        case streaming(UpstreamResponse.Stream.Source)
        /// The event-loop data plane's exchange: every part goes to `sink` as it is read, on this
        /// loop (``UpstreamSink``).
        case relaying(any UpstreamSink, headSeen: Bool)
        case closed
    }

    /// Wakes the connection's reads when the body's reader wants more, and closes it when the
    /// reader went away before the end (the rest of the body cannot be skipped on a shared line).
    struct Demand: NIOAsyncSequenceProducerDelegate {
        let handler: NIOLoopBound<UpstreamExchangeHandler>
        let exchange: Int

        func produceMore() {
            handler.eventLoop.execute { handler.value.produceMore(exchange: exchange) }
        }

        func didTerminate() {
            handler.eventLoop.execute { handler.value.readerWentAway(exchange: exchange) }
        }
    }

    private var state = State.idle
    private var context: ChannelHandlerContext?
    private var exchange = 0
    /// Whether the response head let the connection stay open (its version and `Connection`).
    private var keepAlive = false
    private var requestWritten = false
    private var readPaused = false
    private var readPending = false
    private var timeout: TimeAmount = .seconds(30)
    /// When the exchange fails unless something moves: a head, a body part, or (while the reader is
    /// behind) the reader asking for more. Moved at every step and lifted at the exchange's end,
    /// not cancelled per exchange (``LoopDeadline``).
    private var timer: LoopDeadline?
    private var onComplete: ((_ reusable: Bool) -> Void)?

    /// The most of a body kept while its head's read lasts; past it the body streams.
    static let wholeAnswerBytes = 64 << 10

    /// How long a reader that stopped reading (a client that does not read its answer) may hold the
    /// upstream connection, as nginx's `send_timeout`.
    static let stalledReader: TimeAmount = .seconds(60)

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        timer = LoopDeadline(on: context.eventLoop) { [weak self] in self?.timedOut() }
    }

    /// Sends one request. `promise` receives the head; `onComplete` runs once the response has
    /// ended (reusable: the connection can carry another exchange) or failed (not reusable).
    func start(
        request: HTTPRequest,
        body: ByteBuffer?,
        timeout: TimeAmount,
        promise: EventLoopPromise<UpstreamResponse>,
        onComplete: @escaping (_ reusable: Bool) -> Void
    ) {
        guard case .idle = state, let context, context.channel.isActive, let head = try? HTTPRequestHead(request) else {
            promise.fail(UpstreamFailure.closedBeforeAnswer)
            onComplete(false)
            return
        }
        send(head, body: body, awaiting: .awaitingHead(promise), timeout: timeout, onComplete: onComplete, context: context)
    }

    /// Sends one request for the event-loop data plane: the answer's parts go to `sink` as they
    /// are read, on this connection's loop, which must be the sink's. `onComplete` as for
    /// ``start(request:body:timeout:promise:onComplete:)``.
    func start(
        request: HTTPRequest,
        body: ByteBuffer?,
        timeout: TimeAmount,
        sink: any UpstreamSink,
        onComplete: @escaping (_ reusable: Bool) -> Void
    ) {
        guard case .idle = state, let context, context.channel.isActive, let head = try? HTTPRequestHead(request) else {
            onComplete(false)
            sink.upstreamFailed(.closedBeforeAnswer)
            return
        }
        send(head, body: body, awaiting: .relaying(sink, headSeen: false), timeout: timeout, onComplete: onComplete, context: context)
    }

    private func send(
        _ head: HTTPRequestHead,
        body: ByteBuffer?,
        awaiting: State,
        timeout: TimeAmount,
        onComplete: @escaping (_ reusable: Bool) -> Void,
        context: ChannelHandlerContext
    ) {
        exchange += 1
        state = awaiting
        keepAlive = false
        requestWritten = false
        self.timeout = timeout
        self.onComplete = onComplete
        resumeReading(context: context)
        armTimer(timeout)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body, body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        let written = context.eventLoop.makePromise(of: Void.self)
        let current = exchange
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenSuccess {
            if current == bound.value.exchange { bound.value.requestWritten = true }
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            // A head nobody asked for: the line is out of step, and nothing on it can be trusted.
            guard let response = try? HTTPResponse(head) else {
                fail(.brokeOff)
                return close()
            }
            switch state {
            case .awaitingHead(let promise):
                state = .collecting(promise, response, context.channel.allocator.buffer(capacity: 0))
            case .relaying(let sink, headSeen: false):
                state = .relaying(sink, headSeen: true)
                sink.upstreamHead(response)
            default:
                fail(.brokeOff)
                return close()
            }
            keepAlive = head.isKeepAlive
            armTimer(timeout)
        case .body(let part):
            switch state {
            case .collecting(let promise, let response, var body):
                state = .idle  // the buffer is uniquely held while it grows
                if body.readableBytes == 0 { body = part } else { body.writeImmutableBuffer(part) }
                state = .collecting(promise, response, body)
                if body.readableBytes > Self.wholeAnswerBytes { startStreaming(context: context) }
            case .streaming(let source):
                yield(part, to: source)
            case .relaying(let sink, headSeen: true):
                // Parts of a read that began before the client fell behind: the stalled reader's
                // limit stands (``pauseRelay()``).
                armTimer(readPaused ? Self.stalledReader : timeout)
                sink.upstreamBody(part)
            case .idle, .awaitingHead, .relaying, .closed:
                return
            }
        case .end:
            var relayed: (any UpstreamSink)?
            switch state {
            case .collecting(let promise, let response, let body):
                cancelTimer()
                state = .idle
                promise.succeed(UpstreamResponse(head: response, body: .buffered(body)))
            case .streaming(let source):
                cancelTimer()
                state = .idle
                source.finish()
            case .relaying(let sink, headSeen: true):
                cancelTimer()
                state = .idle
                relayed = sink
            case .idle, .awaitingHead, .relaying, .closed:
                return
            }
            // The body's reader may still be behind: the connection reads again (to see the upstream
            // close it while idle), or the next exchange on it would never hear its answer.
            resumeReading(context: context)
            let reusable = requestWritten && keepAlive && context.channel.isActive
            complete(reusable: reusable)
            if !reusable { close() }
            // Told last: the connection is back in the pool (or closing) before the sink may ask
            // for another exchange.
            relayed?.upstreamEnd()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        switch state {
        // The answer did not end in the read that brought its head: it streams from here.
        case .collecting: startStreaming(context: context)
        // What this read brought goes out to the client in one write.
        case .relaying(let sink, headSeen: true): sink.upstreamReadComplete()
        default: break
        }
        context.fireChannelReadComplete()
    }

    /// The data plane's client cannot take more now: no reads until ``resumeRelay()``, and the
    /// longer limit of a stalled reader meanwhile.
    func pauseRelay() {
        guard case .relaying = state else { return }
        readPaused = true
        armTimer(Self.stalledReader)
    }

    /// The data plane's client can take more again.
    func resumeRelay() {
        guard case .relaying = state, let context else { return }
        armTimer(timeout)
        resumeReading(context: context)
    }

    /// The data plane's client went away: the rest of the answer cannot be skipped on a shared
    /// line, so the connection closes. Nothing more reaches the sink.
    func abandonRelay() {
        guard case .relaying = state else { return }
        cancelTimer()
        state = .closed
        complete(reusable: false)
        close()
    }

    /// Hands the waiting proxy the head and a stream that starts with the parts kept so far.
    private func startStreaming(context: ChannelHandlerContext) {
        guard case .collecting(let promise, let response, let body) = state else { return }
        let sequence = UpstreamResponse.Stream.makeSequence(
            backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8),
            finishOnDeinit: false,
            delegate: Demand(handler: NIOLoopBound(self, eventLoop: context.eventLoop), exchange: exchange)
        )
        state = .streaming(sequence.source)
        promise.succeed(UpstreamResponse(head: response, body: .stream(sequence.sequence)))
        if body.readableBytes > 0 { yield(body, to: sequence.source) }
    }

    private func yield(_ part: ByteBuffer, to source: UpstreamResponse.Stream.Source) {
        switch source.yield(part) {
        case .produceMore: armTimer(timeout)
        case .stopProducing:
            // The reader is behind: no reads until it asks for more, and a longer limit on that.
            readPaused = true
            armTimer(Self.stalledReader)
        case .dropped: close()
        }
    }

    func read(context: ChannelHandlerContext) {
        if readPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.closedBeforeAnswer)
        state = .closed
        timer?.stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.stop()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(.closedBeforeAnswer)
        close()
    }

    private func produceMore(exchange: Int) {
        guard exchange == self.exchange, case .streaming = state, let context else { return }
        armTimer(timeout)
        resumeReading(context: context)
    }

    private func resumeReading(context: ChannelHandlerContext) {
        readPaused = false
        if readPending {
            readPending = false
            context.read()
        }
    }

    private func readerWentAway(exchange: Int) {
        guard exchange == self.exchange, case .streaming = state else { return }
        fail(.brokeOff)
        close()
    }

    /// Fails whatever is in flight: the waiting proxy, or the reader of the body.
    private func fail(_ failure: UpstreamFailure) {
        cancelTimer()
        switch state {
        case .awaitingHead(let promise), .collecting(let promise, _, _):
            state = .closed
            promise.fail(failure)
            complete(reusable: false)
        case .streaming(let source):
            state = .closed
            source.finish(failure == .closedBeforeAnswer ? UpstreamFailure.brokeOff : failure)
            complete(reusable: false)
        case .relaying(let sink, let headSeen):
            state = .closed
            complete(reusable: false)
            sink.upstreamFailed(headSeen && failure == .closedBeforeAnswer ? .brokeOff : failure)
        case .idle, .closed:
            state = .closed
        }
    }

    private func complete(reusable: Bool) {
        let onComplete = self.onComplete
        self.onComplete = nil
        onComplete?(reusable)
    }

    private func close() {
        state = .closed
        context?.close(promise: nil)
    }

    private func armTimer(_ limit: TimeAmount) {
        timer?.set(in: limit)
    }

    private func timedOut() {
        switch state {
        case .awaitingHead, .collecting, .streaming, .relaying: break
        case .idle, .closed: return
        }
        fail(.timedOut)
        close()
    }

    private func cancelTimer() {
        timer?.clear()
    }
}

/// Where the event-loop data plane takes an upstream answer, part by part, on the loop it shares
/// with the upstream connection (``UpstreamExchangeHandler/start(request:body:timeout:sink:onComplete:)``),
/// and from which exchange, to pause, resume or abandon it.
protocol UpstreamSink: AnyObject {
    /// The client went away before its request could go out: it never will.
    var abandoned: Bool { get }
    func upstreamConnected(_ exchange: UpstreamExchangeHandler)
    func upstreamHead(_ head: HTTPResponse)
    func upstreamBody(_ part: ByteBuffer)
    /// The answer is whole; the connection is back in the pool (or closed) already.
    func upstreamEnd()
    /// A read of the upstream's connection ended: what it brought may leave in one write.
    func upstreamReadComplete()
    /// No answer (before its head), or an answer that broke off (after it).
    func upstreamFailed(_ failure: UpstreamFailure)
}
