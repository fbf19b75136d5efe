// SPDX-License-Identifier: Apache-2.0
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// Puts the event-loop data plane (``LoopProxyHandler``) into an HTTP/2 stream's pipeline, where
/// it sits on an HTTP/1.1 connection (``DataPlaneChannel``): after the stream's connection-state
/// handler. Hummingbird builds a stream's pipeline itself, placing only the configuration's
/// additional handlers, before that handler; this one is one of them, and on the stream's first
/// part — the pipeline is whole by then — adds the data plane after the state handler and leaves.
final class DataPlaneStreamInstaller: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let plane: DataPlane

    init(plane: DataPlane) {
        self.plane = plane
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A pipeline without the state handler is not one Hummingbird made: its requests stay
        // Hummingbird's.
        try? DataPlaneChannel.install(plane, in: context.channel)
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
