// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Gives every request a deadline for its body: from the moment its head is read, the rest must
/// arrive within `timeout`, however it trickles (Hummingbird's idle timer restarts at every body
/// byte). A head is bounded already: a partly read head is no activity to that timer, so it closes
/// a connection whose head takes longer than its idle timeout.
///
/// Past the deadline the request's body fails with ``RequestDeadlineExceeded`` — whoever awaits it
/// answers `408 request_too_slow` — and the connection is closed once that answer is written, or
/// right away when the request was answered already (an early refusal whose body the server would
/// otherwise drain for as long as the client cares to send it); either way lingering
/// (``LingeringClose``: output first, input dropped a while). Nothing that comes after a missed
/// deadline is handed on, and a request is never handed on with a body cut short. Sits after the
/// HTTP codecs.
///
/// **Only the time the gateway reads counts.** A pipelined request whose head arrived while the
/// one before it is served waits with its body unread: the handlers after this one hold the
/// connection's reads (they pass no `read` on) until they can take it. That time is the gateway's,
/// not the client's: the deadline is moved on by however long reads were held since it was armed,
/// so a body the client sent in time is never refused because the request before it was slow.
/// Held time while the connection cannot be written is the client's (it does not read the answer
/// that holds the reads), and is not owed back: a client cannot stretch its own deadline by
/// reading slowly.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What the body of a request that missed its deadline fails with.
    struct RequestDeadlineExceeded: Error {}

    private let timeout: TimeAmount
    /// The deadline of the request whose body is being read; none between bodies. Set and lifted
    /// at every request, so never cancelled (``LoopDeadline``).
    private var deadline: LoopDeadline?
    private var deadlineRuns: Bool { deadline?.deadline != nil }
    /// Heads read, and final answers ended, on this connection. Answers go in order, so the
    /// request being read was answered already (an early refusal) once as many answers ended as
    /// heads came; while fewer did, the answer that ends next is an earlier pipelined request's.
    private var headsRead = 0
    private var answersEnded = 0
    /// A request missed its deadline: the connection closes after the answer that ends this many.
    private var closeAfterAnswer: Int?
    /// The handlers after this one hold reads: a read ended and none was asked for since.
    private var readsHeld = false
    /// Since when reads are held, while a deadline runs and the connection can be written: the
    /// gateway's time. Never set for a request whose body came in the read of its head.
    private var countingSince: NIODeadline?
    /// How long reads were held so while the current deadline ran, not yet added to it.
    private var heldTime: TimeAmount = .zero

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A request missed its deadline: what follows it is never handed on — the late body's rest
        // (its reader was told it failed), a request pipelined after it. What the decoder still
        // held is dropped here; what comes is dropped in front of it (``LingeringClose``).
        guard closeAfterAnswer == nil else { return }
        switch unwrapInboundIn(data) {
        case .head:
            headsRead += 1
            heldTime = .zero
            arm(in: timeout, context: context)
        case .end:
            deadline?.clear()
            countingSince = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // The channel asks for the next read right after this, unless a later handler holds it.
        readsHeld = true
        if deadlineRuns, context.channel.isWritable { countingSince = .now() }
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        stopCounting()
        readsHeld = false
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !context.channel.isWritable {
            stopCounting()
        } else if readsHeld, deadlineRuns, countingSince == nil {
            countingSince = .now()
        }
        context.fireChannelWritabilityChanged()
    }

    /// Adds the held time counted so far to what the current deadline is owed.
    private func stopCounting() {
        guard let since = countingSince else { return }
        heldTime = heldTime + (.now() - since)
        countingSince = nil
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        answersEnded += 1
        // An earlier pipelined request's answer is written whole before the late request's.
        guard answersEnded == closeAfterAnswer else { return context.write(data, promise: promise) }
        LingeringClose.writeLast(data, promise: promise, context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // What the decoder makes of input after a missed deadline is no one's concern.
        guard closeAfterAnswer == nil else { return }
        context.fireErrorCaught(error)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The output closed before the late request's answer (a `Connection: close` earlier on
        // the connection: none comes): linger all the same.
        if closeAfterAnswer != nil, case ChannelEvent.outputClosed = event { LingeringClose.begin(context, closingOutput: false) }
        context.fireUserInboundEventTriggered(event)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.stop()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.stop()
        context.fireChannelInactive()
    }

    private func arm(in delay: TimeAmount, context: ChannelHandlerContext) {
        if deadline == nil {
            deadline = LoopDeadline(on: context.eventLoop) { [weak self] in self?.expire(context: context) }
        }
        deadline?.set(in: delay)
    }

    private func expire(context: ChannelHandlerContext) {
        // Time the gateway held reads is owed back: the deadline moves on by it, until a whole
        // stretch of `timeout` passed with reads open to the client.
        let now = NIODeadline.now()
        var owed = heldTime
        if let since = countingSince {
            owed = owed + (now - since)
            countingSince = now
        }
        heldTime = .zero
        if owed > .zero {
            arm(in: owed, context: context)
            return
        }
        countingSince = nil
        // No head is handed on past this (``channelRead``), so no later deadline can move it.
        closeAfterAnswer = headsRead
        // Answered already, and the server would drain the rest: nothing more is owed. The answer
        // may still be on its way out: lingering, the client reads it rather than a reset.
        if answersEnded >= headsRead {
            LingeringClose.begin(context)
            return
        }
        // Nothing the client sends from now on is parsed or handed on.
        LingeringClose.drain(context)
        // The body's reader learns why it ends; it never sees an `.end` that did not come.
        context.fireErrorCaught(RequestDeadlineExceeded())
    }
}
