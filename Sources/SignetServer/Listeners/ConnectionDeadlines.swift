// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOHTTP2

/// Closes a connection whose TLS handshake and protocol choice are not done within `deadline`, or
/// that is still at them when the server shuts down. Until then no HTTP handler, and so no idle
/// timer, is on the connection: without this a client that sends half a ClientHello held its
/// connection, and a shutdown waited for it, forever (nginx's `ssl_handshake_timeout`).
final class NegotiationDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let deadline: TimeAmount
    private var scheduled: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        scheduled = context.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        scheduled?.cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // No request can be in flight before the protocol is chosen: nothing to drain.
        if event is ChannelShouldQuiesceEvent {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// Closes an HTTP/2 connection `deadline` after the server's first GOAWAY, whatever the client
/// does. Hummingbird's connection manager closes an idle or shutting-down connection only once the
/// client acknowledges the PING sent with the GOAWAY: a client that never does kept its connection,
/// and a shutdown waited for it, forever.
final class GoAwayDeadlineHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let deadline: TimeAmount
    private var scheduled: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if scheduled == nil, case .goAway = unwrapOutboundIn(data).payload {
            let channel = context.channel
            scheduled = context.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
        }
        context.write(data, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        scheduled?.cancel()
    }
}
