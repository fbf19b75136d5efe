// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import Logging
import ServiceLifecycle

/// A Hummingbird application running in the background of this process, for `signet demo`, tests,
/// and apps that embed the gateway.
public final class BackgroundServer: Sendable {
    /// The port the server bound (useful when it was asked for port 0).
    public let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.group = group
        self.task = task
    }

    /// Starts the application `make` builds, once it listens.
    ///
    /// - Parameters:
    ///   - logger: Where the service group logs its start and shutdown.
    ///   - make: Builds the application, given the callback to pass as its `onServerRunning`.
    public static func start<App: ApplicationProtocol>(
        logger: Logger,
        _ make: (@escaping @Sendable (Int) async -> Void) -> App
    ) async throws -> BackgroundServer {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = make { port in continuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value
            throw CancellationError()
        }
        return BackgroundServer(port: port, group: group, task: task)
    }

    /// Stops gracefully and waits until the server is down.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
