// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import SignetCore
import SignetMiddleware

/// The upstream side of one data-plane exchange: takes the upstream's answer part by part
/// (``UpstreamSink``) and writes it to the client through ``LoopProxyHandler``, pausing the
/// upstream's reads while the client cannot take more. Both connections share one event loop.
///
/// An answer that ends in the read that brought its head (most small ones) leaves whole: head,
/// body and end in one write, with its length (as Hummingbird writes a whole body), so an
/// HTTP/1.0 client reads it as well as any; a longer one streams from the end of that read.
///
/// An answer the gateway signs (to a verified request, where `responseSigning` is configured) is
/// held whole — at most ``SignetGateway/maximumBufferedResponseBytes`` — then signed and written,
/// as `GatewayProxy` does: its signature covers its digest. So is one its gate reworks
/// (``LoopExchange/answering``: Digest's `auth-int` proof over the body), which past that bound
/// streams on as it is — what the gate itself does with an answer too long for it.
final class LoopRelay: UpstreamSink {
    private weak var handler: LoopProxyHandler?
    private let exchange: LoopExchange
    private var upstream: UpstreamExchangeHandler?
    /// The head and the body's parts of the read that brought the head, until that read ends.
    private var held: (head: HTTPResponse, body: [ByteBuffer])?
    /// The answer is signed: held whole, in one buffer, until its end.
    private let signs: Bool
    /// The answer is held whole (signed, or reworked by its gate) until its end.
    private var holds: Bool
    /// The most it holds: what can be signed, or — held only for its gate's rework — what the gate
    /// reworks (`maxBodyBytes`, as Digest's proof reads at most), past which it streams on.
    private let holdLimit: Int
    private var whole = ByteBuffer()
    private var headWritten = false
    private var paused = false
    private var over = false

    init(handler: LoopProxyHandler, exchange: LoopExchange) {
        self.handler = handler
        self.exchange = exchange
        signs = exchange.signsAnswer
        holds = exchange.holdsAnswer
        let signable = SignetGateway.maximumBufferedResponseBytes
        holdLimit = signs ? signable : min(signable, exchange.snapshot?.maximumBodyBytes ?? signable)
    }

    var abandoned: Bool { over }

    func upstreamConnected(_ exchange: UpstreamExchangeHandler) {
        upstream = exchange
    }

    func upstreamHead(_ head: HTTPResponse) {
        guard !over else { return }
        // Announced past what its gate reworks: it streams as it is from its head.
        if holds, !signs, let length = head.headerFields[.contentLength].flatMap(Int.init), length > holdLimit { holds = false }
        held = (head, [])
    }

    func upstreamBody(_ part: ByteBuffer) {
        guard !over else { return }
        // A HEAD answer has no body, whatever comes.
        guard exchange.head.method != .head else { return }
        if holds {
            // Copied into one buffer as it comes: parts kept apart would each pin a read buffer.
            guard whole.readableBytes + part.readableBytes <= holdLimit else {
                guard signs else { return streamOn(part) }
                return fail(SignetError(.upstreamUnavailable, "the upstream's answer exceeds the \(holdLimit) bytes that can be signed"))
            }
            whole.writeImmutableBuffer(part)
            return
        }
        if held != nil {
            held!.body.append(part)
            return
        }
        if handler?.answer(exchange, body: part) == false, !paused {
            paused = true
            upstream?.pauseRelay()
        }
    }

    func upstreamReadComplete() {
        // An answer held whole leaves at its end.
        guard !over, !holds else { return }
        // The answer goes on beyond this read: it streams, its length (or chunking) the upstream's.
        if let (head, body) = held {
            held = nil
            writeHead(head)
            for part in body { upstreamBody(part) }
        }
        handler?.flushAnswer()
    }

    func upstreamEnd() {
        guard !over else { return }
        over = true
        upstream = nil
        if holds, let (head, _) = held {
            held = nil
            return finishWhole(head, whole)
        }
        if let (head, body) = held {
            held = nil
            var whole = head
            // Whole: its length is known (a HEAD answer keeps the upstream's).
            // Changed only where they differ: nearly every upstream framed it so already, and a
            // change copies every field of the head.
            if exchange.head.method != .head, whole.status.code >= 200, whole.status != .noContent, whole.status != .notModified {
                let length = String(body.reduce(0) { $0 + $1.readableBytes })
                if whole.headerFields[.contentLength] != length { whole.headerFields[.contentLength] = length }
                if whole.headerFields[.transferEncoding] != nil { whole.headerFields[.transferEncoding] = nil }
            }
            writeHead(whole)
            for part in body { _ = handler?.answer(exchange, body: part) }
        }
        handler?.finish(exchange)
    }

    func upstreamFailed(_ failure: UpstreamFailure) {
        guard !over else { return }
        over = true
        upstream = nil
        held = nil
        if headWritten {
            handler?.breakOff(exchange)
        } else {
            handler?.refuse(exchange, GatewayProxy.error(failure))
        }
    }

    /// Signs the whole answer, has its gate rework it, and writes it; one that cannot be signed is
    /// refused as `GatewayProxy` refuses it.
    private func finishWhole(_ head: HTTPResponse, _ body: ByteBuffer) {
        let answer: HTTPResponse
        let content: ByteBuffer?
        do {
            (answer, content) = signs ? try exchange.signedAnswer(head, body: body) : (exchange.answerHead(head), body)
        } catch {
            handler?.refuse(exchange, error)
            return
        }
        guard let answering = exchange.answering else {
            headWritten = true
            handler?.answer(exchange, whole: answer, body: content)
            return
        }
        // Nothing written until it is reworked: a client gone meanwhile is logged as gone there.
        handler?.answer(exchange, whole: answer, body: content, reworkedBy: answering)
    }

    /// Past the bound of what is held: an answer held only for its gate's rework streams on as
    /// it is, what was held first.
    private func streamOn(_ part: ByteBuffer) {
        holds = false
        if let (head, _) = held {
            held = nil
            writeHead(head)
        }
        let first = whole
        whole = ByteBuffer()
        if first.readableBytes > 0 { _ = handler?.answer(exchange, body: first) }
        upstreamBody(part)
    }

    /// The answer cannot be delivered: the upstream's connection closed (it cannot be reused
    /// mid-answer), and the client refused with `error`.
    private func fail(_ error: SignetError) {
        over = true
        held = nil
        upstream?.abandonRelay()
        upstream = nil
        handler?.refuse(exchange, error)
    }

    private func writeHead(_ head: HTTPResponse) {
        headWritten = true
        handler?.answer(exchange, head: head)
    }

    /// The client's connection can take more: the upstream's is read again.
    func clientCanTakeMore() {
        guard paused, !over else { return }
        paused = false
        upstream?.resumeRelay()
    }

    /// The client's connection closed: the upstream's cannot be reused mid-answer, and one still
    /// being opened sends nothing (``abandoned``). Before the answer's head, the request is logged
    /// as its client's doing (`499`), not lost from the log.
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
