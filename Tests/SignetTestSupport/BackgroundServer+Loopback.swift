// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import Logging
import SignetServer

extension BackgroundServer {
    /// A Hummingbird app on a loopback port of its own, serving the routes `routes` adds: the
    /// peers a test writes in a few lines (a recording server, a redirecting one). Logs nothing.
    public static func loopback(_ routes: (Router<BasicRequestContext>) -> Void) async throws -> BackgroundServer {
        var logger = Logger(label: "signet.test.loopback")
        logger.logLevel = .critical
        let router = Router()
        routes(router)
        return try await BackgroundServer.start(logger: logger) { onRunning in
            Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
                logger: logger
            )
        }
    }
}
