// SPDX-License-Identifier: Apache-2.0
import HummingbirdCore
import Logging
import NIOCore

/// A server child channel whose first handler counts the connection against its client's limit
/// (``ConnectionLimits``) and closes it, before TLS or a byte of HTTP, when the client is over it.
struct ConnectionLimitChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let limits: ConnectionLimits

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // After the base's setup, so this handler is first even ahead of a PROXY header's reader.
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(ConnectionLimitHandler(limits: limits), position: .first)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Counts its connection from `channelActive` to `channelInactive`, which NIO pairs for every
/// channel that became active.
final class ConnectionLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let limits: ConnectionLimits
    private var counted: String?

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    func channelActive(context: ChannelHandlerContext) {
        switch limits.admit(peer: context.channel.remoteAddress?.ipAddress) {
        case .refused:
            context.close(promise: nil)
            return
        case .counted(let key):
            counted = key
        case .uncounted:
            break
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let counted { limits.release(counted) }
        counted = nil
        context.fireChannelInactive()
    }
}
