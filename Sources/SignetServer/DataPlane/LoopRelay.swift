// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import SignetCore
import SignetMiddleware

/// The upstream side of one data-plane exchange: takes the upstream's answer part by part
/// (``UpstreamSink``) and writes it to the client through ``LoopProxyHandler``, pausing the
/// upstream's reads while the client cannot take more. Both connections share one event loop.
final class LoopRelay: UpstreamSink, UpstreamRelayClient {
    private weak var handler: LoopProxyHandler?
    private let exchange: LoopExchange
    private var upstream: UpstreamExchangeHandler?
    private var headWritten = false
    private var paused = false
    private var over = false

    init(handler: LoopProxyHandler, exchange: LoopExchange) {
        self.handler = handler
        self.exchange = exchange
    }

    func upstreamConnected(_ exchange: UpstreamExchangeHandler) {
        upstream = exchange
    }

    func upstreamHead(_ head: HTTPResponse) {
        guard !over else { return }
        headWritten = true
        handler?.answer(exchange, head: head)
    }

    func upstreamBody(_ part: ByteBuffer) {
        guard !over else { return }
        // A HEAD answer has no body, whatever comes.
        guard exchange.head.method != .head else { return }
        if handler?.answer(exchange, body: part) == false, !paused {
            paused = true
            upstream?.pauseRelay()
        }
    }

    func upstreamReadComplete() {
        guard !over else { return }
        handler?.flushAnswer()
    }

    func upstreamEnd() {
        guard !over else { return }
        over = true
        upstream = nil
        handler?.finish(exchange)
    }

    func upstreamFailed(_ failure: UpstreamFailure) {
        guard !over else { return }
        over = true
        upstream = nil
        if headWritten {
            handler?.breakOff(exchange)
        } else {
            handler?.refuse(exchange, GatewayProxy.error(failure))
        }
    }

    /// The client's connection can take more: the upstream's is read again.
    func clientCanTakeMore() {
        guard paused, !over else { return }
        paused = false
        upstream?.resumeRelay()
    }

    /// The client's connection closed: the upstream's cannot be reused mid-answer. Before the
    /// answer's head, the request is logged as its client's doing (`499`), not lost from the log.
    func clientWentAway() {
        guard !over else { return }
        over = true
        if !headWritten {
            exchange.refused(SignetError(.clientClosedRequest, "the client closed the connection before its answer"))
            exchange.logAnswer(status: ProblemResponse.status(for: .clientClosedRequest).code)
        }
        exchange.release()
        upstream?.abandonRelay()
        upstream = nil
    }
}
