// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes the connection when its client stops sending while a request of it is in progress — from
/// its head until its answer is written — so that nothing is done on behalf of a client that has
/// gone: the proxy forwards nothing for a closed connection (`clientHasGone`).
///
/// The listeners allow remote half-closure (Hummingbird's default), so a client that closes its
/// socket is, to the server, only an end of input: without this the connection stays active and a
/// request held by a slow store was forwarded after its client had given up — and retried with a
/// fresh nonce, as the docs tell it to. nginx treats an end of input during a proxied request the
/// same way (`proxy_ignore_client_abort off`, its default: `499`). Between requests an end of input
/// is passed on, and the server closes the connection as before.
final class ClientDepartureHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests read whose answer is not written yet (pipelined ones included).
    private var inProgress = 0

    init() {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { inProgress += 1 }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { inProgress = max(0, inProgress - 1) }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event, inProgress > 0 {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
