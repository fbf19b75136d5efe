// SPDX-License-Identifier: Apache-2.0
import HummingbirdCore
import Logging
import NIOCore
import SignetMiddleware

/// A server child channel that reads the PROXY protocol header (``ProxyProtocolHandler``) before
/// whatever `Base` sets up — TLS included, as balancers send the header before the handshake.
struct ProxyProtocolChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let trusted: TrustedProxies

    init(_ base: Base, trusted: TrustedProxies) {
        self.base = base
        self.trusted = trusted
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ProxyProtocolHandler(trusted: trusted), position: .first)
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
