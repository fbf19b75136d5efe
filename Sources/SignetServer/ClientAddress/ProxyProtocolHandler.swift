// SPDX-License-Identifier: Apache-2.0
import NIOCore
import SignetMiddleware

/// First in a connection's pipeline when the trusted proxies speak the PROXY protocol: from a
/// trusted peer it reads the header (refusing the connection without a valid one), keeps its
/// source address and passes every later byte on; from any other peer it passes everything on and
/// the peer is the client. Before TLS, as balancers send the header before the handshake.
final class ProxyProtocolHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum State {
        case awaiting(ByteBuffer)
        case passing
    }

    private let trusted: TrustedProxies
    private var state = State.awaiting(ByteBuffer())
    /// The client's address the header named; `nil` until it was read, for untrusted peers, and
    /// for a balancer's own connections (`LOCAL`, `UNKNOWN`).
    private(set) var source: String?

    init(trusted: TrustedProxies) {
        self.trusted = trusted
    }

    func channelActive(context: ChannelHandlerContext) {
        if !trusted.isTrusted(context.channel.remoteAddress?.ipAddress) { state = .passing }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .awaiting(var buffered) = state else { return context.fireChannelRead(data) }
        var incoming = unwrapInboundIn(data)
        buffered.writeBuffer(&incoming)
        switch ProxyProtocolHeader.parse(buffered.readableBytesView) {
        case .incomplete:
            state = .awaiting(buffered)
        case .invalid:
            // A trusted peer that does not speak the protocol it was configured with: nothing on
            // this connection can be attributed to anyone.
            state = .passing
            context.close(promise: nil)
        case .header(let address, let length):
            source = address?.unmapped.description
            buffered.moveReaderIndex(forwardBy: length)
            state = .passing
            if buffered.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(buffered)) }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard case .passing = state else { return }
        context.fireChannelReadComplete()
    }
}
