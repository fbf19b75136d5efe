// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes the connection when its client stops sending while a complete request of it waits for
/// its answer — judged, perhaps held by a slow store — so that nothing is forwarded on behalf of a
/// client that has gone (`clientHasGone`).
///
/// The listeners allow remote half-closure (Hummingbird's default), so a client that closes its
/// socket is, to the server, only an end of input: without this the connection stayed active and a
/// request held by a slow store was forwarded after its client had given up — and retried with a
/// fresh nonce, as the docs tell it to. nginx treats an end of input during a proxied request the
/// same way (`proxy_ignore_client_abort off`, its default). An end of input mid-body is the
/// parser's (`499`); once an answer has begun, or between requests, it is passed on as before, so
/// a client that half-closes still reads an answer already under way.
final class ClientDepartureHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests read whole, and answers begun, on this connection. Answers go in order, so a
    /// complete request waits for its answer while there are more of the first (an early answer,
    /// written before its request's end, is counted before it).
    private var requestsRead = 0
    private var answersBegun = 0

    init() {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) { requestsRead += 1 }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // An interim answer (`100 Continue`) is not the request's answer.
        if case .head(let response) = unwrapOutboundIn(data), response.status.kind != .informational {
            answersBegun += 1
        }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event, requestsRead > answersBegun {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
