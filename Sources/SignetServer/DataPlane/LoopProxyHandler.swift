// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes
import SignetCore
import SignetMiddleware

/// The event-loop data plane on an HTTP/1.1 connection or an HTTP/2 stream of the apps'
/// listener: a request to a route whose gate runs here (``LoopGate``: `open`, the signature
/// modes, most other gates) is read, judged, forwarded and answered here, on the connection's
/// event loop — no hop to another thread, a
/// verification in a task on this loop (``LoopTaskExecutor``), the upstream's connection on the
/// same loop and its answer relayed straight into this one. Every other request goes on to
/// Hummingbird as before.
///
/// What holds as on Hummingbird's path (issue 39):
/// - **Judged when complete.** The body is read whole (bounded) before anything goes upstream,
///   and the route is decided again, by the configuration in force, once the request is complete.
///   Anything unusual while a body is read — past `maxBodyBytes`, the request deadline, a parser
///   error, a client leaving — hands the request, with the parts read so far, to Hummingbird,
///   which answers it as it answers any other. A signed request's head is screened while its
///   body is still to come (one that cannot verify is Hummingbird's to refuse at once); the
///   complete request is verified by the route's own middleware, and a refusal answered here as
///   `ProblemMiddleware` answers it.
/// - **In order.** A request is taken only when no answer of Hummingbird's is pending on the
///   connection; while one is forwarded, the requests pipelined after it wait, unread.
/// - **Bounded both ways.** The upstream's connection is read only as fast as the client takes
///   the answer (``UpstreamExchangeHandler/pauseRelay()``).
/// - The upstream receives the routed path, the gateway's own forwarding fields and a length it
///   wrote (``ForwardedFields``); answers carry the upstream's status without its reason phrase,
///   its fields less the hop-by-hop ones, `Date` and `Server`, and each request has one access
///   log line and its metrics (``AccessLog``).
///
/// It sits just before Hummingbird's own handler, after its connection-state handler
/// (``DataPlaneChannel``, ``DataPlaneStreamInstaller``), which so counts these requests among
/// those in progress. An HTTP/2 stream is one request: nothing is pipelined there, and its end
/// (or a reset) is the stream's close.
final class LoopProxyHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let plane: DataPlane
    private var context: ChannelHandlerContext?
    /// Where verifications run: this connection's loop.
    private var executor: LoopTaskExecutor?

    private enum State {
        case idle
        /// This request's parts go to Hummingbird, up to its end.
        case passing
        /// A request this handler took, its body being read.
        case collecting(LoopExchange)
        /// A complete request its gate is verifying (``LoopVerifier``).
        case judging(LoopExchange)
        /// A complete request with the upstream, or its answer being relayed.
        case forwarding(LoopExchange)
        /// Answered; what came meanwhile is taken up on the loop's next turn (not inside the
        /// upstream connection's read, which may still be decoding when the answer ends).
        case resuming
    }

    private var state = State.idle
    /// Requests given to Hummingbird whose answers have not ended.
    private var hummingbirdAnswers = 0
    /// What came while a request was forwarded: handled, in order, once it is answered.
    private var waiting = CircularBuffer<Waiting>()
    /// Hummingbird asked for a read while a request was forwarded: issued once it is answered.
    private var readHeld = false

    private enum Waiting {
        case part(HTTPRequestPart)
        case error(any Error)
        case event(Any)
    }

    init(plane: DataPlane) {
        self.plane = plane
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        executor = LoopTaskExecutor(context.eventLoop)
        // Hummingbird's connection-state handler, in front of this one, does not pass
        // `channelInactive` on: the close is learnt from the channel itself.
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.channel.closeFuture.whenComplete { _ in bound.value.connectionClosed() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard !isBusy else {
            waiting.append(.part(part))
            return
        }
        handle(part, context: context)
    }

    private func handle(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        switch (state, part) {
        case (.idle, .head(let head)):
            if hummingbirdAnswers == 0, let exchange = take(head, context: context) {
                state = .collecting(exchange)
            } else {
                pass(part, context: context)
                state = .passing
            }
        case (.passing, .end):
            state = .idle
            context.fireChannelRead(wrapInboundOut(part))
        case (.collecting(let exchange), .body(let buffer)):
            guard exchange.append(buffer) else {
                // Past the limit: Hummingbird refuses it, as it refuses any other — this part too.
                return handOver(exchange, then: part, context: context)
            }
        case (.collecting(let exchange), .end):
            complete(exchange, context: context)
        case (.idle, _), (.passing, _), (.collecting, .head), (.judging, _), (.forwarding, _), (.resuming, _):
            // Out of step (a part with no head, a head inside a body): Hummingbird's to refuse.
            if case .collecting(let exchange) = state { return handOver(exchange, then: part, context: context) }
            if case .head = part { hummingbirdAnswers += 1 }
            context.fireChannelRead(wrapInboundOut(part))
        }
    }

    /// A request's head handed to Hummingbird, counted until its answer ends.
    private func pass(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        hummingbirdAnswers += 1
        context.fireChannelRead(wrapInboundOut(part))
    }

    /// A request the data plane answers, from its head: `nil` leaves it to Hummingbird.
    private func take(_ head: HTTPRequest, context: ChannelHandlerContext) -> LoopExchange? {
        guard let snapshot = plane.snapshot, let received = head.path,
            let routed = try? RoutingPath.normalize(received),
            let decision = snapshot.decide(method: head.method, routedPath: routed),
            // A body that waits for `100 Continue` is Hummingbird's, and so is one announced past
            // the limit (refused before it is read).
            head.headerFields[.expect] == nil,
            head.headerFields[.contentLength].flatMap(Int.init).map({ $0 <= snapshot.maximumBodyBytes }) ?? true
        else { return nil }
        let client = Self.clientAddress(head, snapshot: snapshot, context: context)
        var slot: ClientRequestLimiter.Slot?
        if let (limiter, perClient) = snapshot.clientRequests {
            // Past the limit, Hummingbird refuses it `connection_limit`.
            guard let entered = try? limiter.enter(client: client, limit: perClient) else { return nil }
            slot = entered
        }
        let exchange = LoopExchange(
            head: head,
            routedPath: routed,
            client: client,
            slot: slot,
            maximumBodyBytes: snapshot.maximumBodyBytes,
            allocator: context.channel.allocator,
            plane: plane
        )
        // Screened at the end of this read, if its body is still to come (``channelReadComplete``);
        // a `monitor` route's never (it refuses nothing from a head).
        if hasBody(head, context: context) { exchange.screen = snapshot.screen(head, decision) }
        return exchange
    }

    /// A request with a body to read, as ``RequestCompletionResponder`` decides it.
    private func hasBody(_ head: HTTPRequest, context: ChannelHandlerContext) -> Bool {
        RequestCompletionResponder.hasBody(head, onHTTP2: context.channel.isHTTP2Stream)
    }

    /// Screens the head of a request to a signed route whose body is still to come: one that
    /// cannot verify goes to Hummingbird at once, with what was read, and is refused there from its
    /// head (screened again: a screen writes nothing) — no body of an unsigned sender is waited
    /// for. A request complete in the read that brought its head is screened only if its gate
    /// refuses it (``LoopScreen/judging(_:_:receivedTarget:_:)``).
    private func screen(_ exchange: LoopExchange, _ screen: LoopScreen, context: ChannelHandlerContext) {
        guard let executor else { return }
        let head = exchange.head
        let received = exchange.receivedTarget
        let screening = executor.run { try await screen.screen(head, receivedTarget: received) }
        exchange.screening = screening
        let bound = NIOLoopBound((self, context, exchange), eventLoop: context.eventLoop)
        screening.whenFailure { _ in
            let (handler, context, exchange) = bound.value
            guard case .collecting(let current) = handler.state, current === exchange else { return }
            handler.handOver(exchange, then: nil, context: context)
            context.fireChannelReadComplete()
        }
    }

    /// The client's address as ``ClientAddressResponder`` establishes it.
    private static func clientAddress(_ head: HTTPRequest, snapshot: DataPlane.Snapshot, context: ChannelHandlerContext) -> String? {
        let peer = context.channel.remoteAddress?.ipAddress
        guard let trusted = snapshot.trustedProxies else { return peer }
        if trusted.source == .proxyProtocol {
            // On the connection, an HTTP/2 stream's parent, on the same loop.
            return (try? context.channel.connection.pipeline.syncOperations.handler(type: ProxyProtocolHandler.self).source) ?? peer
        }
        return trusted.client(peer: peer, fields: head.headerFields)
    }

    /// The request is Hummingbird's after all: the parts read so far go on to it, then `part`.
    private func handOver(_ exchange: LoopExchange, then part: HTTPRequestPart?, context: ChannelHandlerContext) {
        exchange.release()
        state = .passing
        pass(.head(exchange.head), context: context)
        if exchange.body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(exchange.body))) }
        if let part {
            if case .end = part { state = .idle }
            context.fireChannelRead(wrapInboundOut(part))
        }
    }

    /// The request is complete: judged by the configuration in force now, then forwarded.
    private func complete(_ exchange: LoopExchange, context: ChannelHandlerContext) {
        guard let snapshot = plane.snapshot, let decision = snapshot.decide(method: exchange.head.method, routedPath: exchange.routedPath) else {
            // A reload made it another gate's.
            return handOver(exchange, then: .end(nil), context: context)
        }
        exchange.begin(snapshot: snapshot)
        let monitored = decision.monitored
        switch decision.gate {
        case .open(let admit):
            state = .forwarding(exchange)
            forward(exchange, snapshot: snapshot, context: context, admit: admit)
        case .verifying(let verifier):
            judge(exchange, monitored: monitored, snapshot: snapshot, context: context) { request in
                try await verifier.judge(request)
            }
        case .authenticating(let authenticator):
            judge(exchange, monitored: monitored, snapshot: snapshot, context: context) { request in
                try await authenticator.judge(
                    request,
                    maximumBodyBytes: snapshot.maximumBodyBytes,
                    storeTimeout: snapshot.storeTimeout,
                    logger: snapshot.logger
                )
            }
        }
    }

    /// Judges the complete request by its gate (`gate`, in a task on this loop), once its head
    /// passed the screen where one was begun while its body was read: admitted, it is forwarded
    /// as the gate left it; refused, it is answered here, or — on a `monitor` route, where the
    /// refusal is a verdict — forwarded with it (``refused(_:_:monitored:snapshot:context:)``). A
    /// head the screen refused, before or after the gate (``LoopScreen/judging(_:_:receivedTarget:_:)``),
    /// is Hummingbird's, which refuses it as from its head.
    private func judge(
        _ exchange: LoopExchange,
        monitored: Bool,
        snapshot: DataPlane.Snapshot,
        context: ChannelHandlerContext,
        by gate: nonisolated(nonsending) @escaping @Sendable (LoopRequest) async throws -> LoopAdmission
    ) {
        state = .judging(exchange)
        guard let screening = exchange.screening else {
            return run(gate, on: exchange, monitored: monitored, snapshot: snapshot, context: context)
        }
        let bound = NIOLoopBound((self, context, exchange), eventLoop: context.eventLoop)
        screening.whenComplete { screen in
            let (handler, context, exchange) = bound.value
            // The connection closed meanwhile: the client's place is given back only now.
            guard case .judging(let current) = handler.state, current === exchange else { return exchange.release() }
            guard case .success = screen else { return handler.handOverComplete(exchange, context: context) }
            handler.run(gate, on: exchange, monitored: monitored, snapshot: snapshot, context: context)
        }
    }

    private func run(
        _ gate: nonisolated(nonsending) @escaping @Sendable (LoopRequest) async throws -> LoopAdmission,
        on exchange: LoopExchange,
        monitored: Bool,
        snapshot: DataPlane.Snapshot,
        context: ChannelHandlerContext
    ) {
        guard let executor else { return }
        let request = exchange.request(on: context.channel)
        let late = exchange.lateScreen
        let bound = NIOLoopBound((self, context, exchange), eventLoop: context.eventLoop)
        executor.run {
            try await LoopScreen.judging(late, request.head, receivedTarget: request.receivedTarget) { try await gate(request) }
        }.whenComplete { judged in
            let (handler, context, exchange) = bound.value
            // The connection closed meanwhile: the client's place is given back only now.
            guard case .judging(let current) = handler.state, current === exchange else { return exchange.release() }
            switch judged {
            case .success(let admission?):
                handler.state = .forwarding(exchange)
                exchange.admitted(admission, monitored: monitored)
                handler.forward(exchange, snapshot: snapshot, context: context, admit: nil)
            case .success(nil):
                handler.handOverComplete(exchange, context: context)
            case .failure(let refusal):
                handler.refused(exchange, refusal, monitored: monitored, snapshot: snapshot, context: context)
            }
        }
    }

    /// Its gate refused the complete request: answered here — or, on a `monitor` route where the
    /// refusal is a verdict, forwarded with it, as ``MonitoredGate`` forwards it.
    private func refused(_ exchange: LoopExchange, _ refusal: any Error, monitored: Bool, snapshot: DataPlane.Snapshot, context: ChannelHandlerContext) {
        state = .forwarding(exchange)
        guard monitored, let verdict = MonitoredGate.Verdict(refusal) else { return refuse(exchange, refusal, context: context) }
        exchange.wouldRefuse(verdict)
        forward(exchange, snapshot: snapshot, context: context, admit: nil)
    }

    /// A complete request that is Hummingbird's after all (its head refused by the screen):
    /// handed over whole, and what came after it taken up once it is.
    private func handOverComplete(_ exchange: LoopExchange, context: ChannelHandlerContext) {
        handOver(exchange, then: .end(nil), context: context)
        context.fireChannelReadComplete()
        resumeAfterAnswer(context: context)
    }

    /// Sends the complete, admitted request upstream, and relays its answer.
    private func forward(_ exchange: LoopExchange, snapshot: DataPlane.Snapshot, context: ChannelHandlerContext, admit: (@Sendable () -> Void)?) {
        // The last moment to refuse: nothing goes upstream for a client that has gone.
        guard context.channel.isActive else {
            return refuse(exchange, SignetError(.clientClosedRequest, "the client closed the connection before its request was forwarded"), context: context)
        }
        admit?()
        exchange.forwarding()
        plane.countForwarded()
        let relay = LoopRelay(handler: self, exchange: exchange)
        exchange.relay = relay
        snapshot.upstream.relay(
            exchange.upstreamRequest(snapshot: snapshot),
            body: exchange.body,
            timeout: snapshot.timeout,
            on: context.eventLoop,
            to: relay
        )
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .collecting(let exchange) = state, let screen = exchange.lateScreen {
            self.screen(exchange, screen, context: context)
        }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch state {
        case .collecting(let exchange):
            // The deadline, a parser error, a client gone mid-body: Hummingbird answers it.
            handOver(exchange, then: nil, context: context)
            context.fireChannelReadComplete()
            context.fireErrorCaught(error)
        case .judging, .forwarding, .resuming:
            waiting.append(.error(error))
        case .idle, .passing:
            context.fireErrorCaught(error)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The end of input while an answer is under way: Hummingbird would close the output.
        guard !isBusy else {
            waiting.append(.event(event))
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The client's connection closed: a request being read is dropped, one being forwarded is
    /// abandoned (its upstream connection closed), and nothing that waited is taken up.
    private func connectionClosed() {
        switch state {
        case .collecting(let exchange):
            exchange.release()
        case .forwarding(let exchange):
            exchange.relay?.clientWentAway()
            exchange.release()
        case .judging:
            // Its gate is still at work (a stream reset costs its client nothing else): the
            // client's place is held until the judgement ends (``verify``, ``authenticate``).
            break
        case .resuming, .idle, .passing:
            break
        }
        state = .idle
        waiting.removeAll()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if case .forwarding(let exchange) = state, context.channel.isWritable { exchange.relay?.clientCanTakeMore() }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), hummingbirdAnswers > 0 { hummingbirdAnswers -= 1 }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        guard !isBusy else {
            readHeld = true
            return
        }
        context.read()
    }

    // MARK: The answer

    /// The upstream's answer head, as the client receives it.
    func answer(_ exchange: LoopExchange, head: HTTPResponse) {
        guard let context, case .forwarding(let current) = state, current === exchange else { return }
        let response = exchange.answerHead(head)
        exchange.logAnswer(status: response.status.code)
        context.write(wrapOutboundOut(.head(response)), promise: nil)
    }

    /// An answer made whole here (signed by the gateway), then its end.
    func answer(_ exchange: LoopExchange, whole head: HTTPResponse, body: ByteBuffer?) {
        guard let context, case .forwarding(let current) = state, current === exchange else { return }
        exchange.logAnswer(status: head.status.code)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body, body.readableBytes > 0 { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        finish(exchange)
    }

    /// An answer made whole here, reworked by its gate (``LoopExchange/answering``) as
    /// `RequestAuthenticator.admit` has it reworked on Hummingbird's path, then its end.
    func answer(
        _ exchange: LoopExchange,
        whole head: HTTPResponse,
        body: ByteBuffer?,
        reworkedBy answering: @escaping @Sendable (inout Response) async throws -> Void
    ) {
        guard let context, let executor, case .forwarding(let current) = state, current === exchange else { return }
        let method = exchange.head.method
        let bound = NIOLoopBound((self, exchange), eventLoop: context.eventLoop)
        executor.run { () -> (HTTPResponse, ByteBuffer) in
            // The length as `GatewayProxy` hands the answer on: a whole one's own (up to what the
            // upstream connection reads whole), else the upstream's field, as for `HEAD`.
            let size = body?.readableBytes ?? 0
            let length = method == .head || size > UpstreamExchangeHandler.wholeAnswerBytes ? nil : size
            var response = Response(
                status: head.status,
                headers: head.headerFields,
                body: ResponseBody(contentLength: length) { writer in
                    if let body, body.readableBytes > 0 { try await writer.write(body) }
                    try await writer.finish(nil)
                }
            )
            try await answering(&response)
            let collector = ResponseBodyCollector(limit: .max)
            try await response.body.write(collector)
            var reworked = HTTPResponse(status: response.status, headerFields: response.headers)
            let content = collector.collected ?? ByteBuffer()
            // Whole: its length is known (a HEAD answer keeps the upstream's).
            if method != .head, reworked.status.code >= 200, reworked.status != .noContent, reworked.status != .notModified {
                reworked.headerFields[.contentLength] = String(content.readableBytes)
                reworked.headerFields[.transferEncoding] = nil
            }
            return (reworked, content)
        }.whenComplete { result in
            let (handler, exchange) = bound.value
            guard case .forwarding(let current) = handler.state, current === exchange else {
                // The client left while it was reworked: logged as its doing, as before a head.
                exchange.refused(SignetError(.clientClosedRequest, "the client closed the connection before its answer"))
                exchange.logAnswer(status: ProblemResponse.status(for: .clientClosedRequest).code)
                return
            }
            switch result {
            case .success(let (reworked, content)): handler.answer(exchange, whole: reworked, body: content)
            case .failure(let error): handler.refuse(exchange, error)
            }
        }
    }

    func answer(_ exchange: LoopExchange, body: ByteBuffer) -> Bool {
        guard let context, case .forwarding(let current) = state, current === exchange else { return true }
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        return context.channel.isWritable
    }

    func flushAnswer() {
        context?.flush()
    }

    func finish(_ exchange: LoopExchange) {
        guard let context, case .forwarding(let current) = state, current === exchange else { return }
        let closing = exchange.head.headerFields[.connection].map { $0.lowercased().contains("close") } ?? false
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        if closing {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
            exchange.release()
            return
        }
        // An HTTP/2 stream's answer is written only as its client opens its window: the client's
        // place is held until the stream closes, as ``RequestCompletionResponder`` holds it.
        if context.channel.isHTTP2Stream { exchange.holdSlot(until: context.channel.closeFuture) }
        done(exchange, context: context)
    }

    /// A refusal of its gate, or no answer from the upstream: answered as `ProblemMiddleware`
    /// answers it on Hummingbird's path (its challenges and fields too).
    func refuse(_ exchange: LoopExchange, _ refusal: any Error, context: ChannelHandlerContext? = nil) {
        guard let context = context ?? self.context, case .forwarding(let current) = state, current === exchange else { return }
        let error = ProblemResponse.signetError(from: refusal)
        exchange.refused(error)
        plane.countRefused()
        let (status, fields, json) = ProblemResponse.parts(
            error,
            debug: exchange.snapshot?.debug ?? false,
            challenges: ProblemResponse.challenges(of: refusal)
        )
        var head = HTTPResponse(status: status, headerFields: fields)
        if let refusal = refusal as? ChallengedRefusal { head.headerFields.append(contentsOf: refusal.fields) }
        head.headerFields[.contentLength] = String(json.count)
        LoopProxyHandler.stamp(&head)
        exchange.logAnswer(status: status.code)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: json))), promise: nil)
        finish(exchange)
    }

    /// The answer broke off after its head: the client cannot be told, only cut off.
    func breakOff(_ exchange: LoopExchange) {
        guard let context, case .forwarding(let current) = state, current === exchange else { return }
        exchange.release()
        context.close(promise: nil)
    }

    /// The exchange is over: what came meanwhile is taken up, in order, on the loop's next turn,
    /// until another request is forwarded.
    private func done(_ exchange: LoopExchange, context: ChannelHandlerContext) {
        exchange.release()
        resumeAfterAnswer(context: context)
    }

    /// What came while a request was taken up, in order, on the loop's next turn.
    private func resumeAfterAnswer(context: ChannelHandlerContext) {
        guard !waiting.isEmpty else {
            state = .idle
            return resumeReading(context: context)
        }
        state = .resuming
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = bound.value
            handler.takeUpWaiting(context: context)
        }
    }

    private func takeUpWaiting(context: ChannelHandlerContext) {
        guard case .resuming = state, self.context != nil else { return }
        state = .idle
        while !isBusy, let next = waiting.popFirst() {
            switch next {
            case .part(let part): handle(part, context: context)
            case .error(let error): errorCaught(context: context, error: error)
            case .event(let event): userInboundEventTriggered(context: context, event: event)
            }
        }
        // Hummingbird takes what it was given at the end of a read.
        context.fireChannelReadComplete()
        resumeReading(context: context)
    }

    private func resumeReading(context: ChannelHandlerContext) {
        if readHeld, !isBusy {
            readHeld = false
            context.read()
        }
    }

    /// A request is with the upstream, or the parts that came meanwhile are still to be taken up.
    private var isBusy: Bool {
        switch state {
        case .judging, .forwarding, .resuming: true
        case .idle, .passing, .collecting: false
        }
    }

    /// `Date` and `Server`, as Hummingbird's application writes them on every answer.
    static func stamp(_ head: inout HTTPResponse) {
        stamp(&head.headerFields)
    }

    static func stamp(_ fields: inout HTTPFields) {
        fields[.date] = HTTPDate.now
        fields[.server] = "signet"
    }
}
