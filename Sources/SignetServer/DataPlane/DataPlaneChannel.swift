// SPDX-License-Identifier: Apache-2.0
import HummingbirdCore
import Logging
import NIOCore

/// An HTTP/1.1 server child channel with the event-loop data plane (``LoopProxyHandler``) in its
/// pipeline, just before Hummingbird's handler: after Hummingbird's connection-state handler, so
/// that the requests the data plane answers count as requests in progress there — its idle timer
/// and a graceful shutdown's quiescing wait for their answers as for Hummingbird's own.
struct DataPlaneChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    let plane: DataPlane

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try Self.install(plane, in: channel)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }

    /// Adds the data plane after the connection-state handler of an HTTP/1.1 pipeline Hummingbird
    /// set up. Call on the channel's loop.
    static func install(_ plane: DataPlane, in channel: any Channel) throws {
        let operations = channel.pipeline.syncOperations
        let state = try operations.handler(type: HTTPConnectionStateHandler.self)
        try operations.addHandler(LoopProxyHandler(plane: plane), position: .after(state))
    }
}
