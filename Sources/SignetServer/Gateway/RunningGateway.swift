// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import SignetStore
import Synchronization

/// A gateway assembled from its configuration and serving in the background of this process, with
/// the store it opened: the one way `signet demo`, the benchmarks and the tests start a gateway
/// (`signet serve` runs the same assembly in the foreground, ``SignetGateway/serve(configuration:logger:reload:onAdminRunning:onAuthorizationRunning:onAuthorizationGRPCRunning:onServerRunning:)``).
///
/// ```swift
/// let running = try await RunningGateway.start(configuration, logger: logger)
/// print("listening on \(running.port)")
/// try await running.stop()   // the server is down and the store closed when this returns
/// ```
public final class RunningGateway: Sendable {
    public let gateway: SignetGateway
    public let server: BackgroundServer
    public var store: any SignetStorage { gateway.store }
    /// The port it bound (configure port 0 for any free one).
    public var port: Int { server.port }

    /// Applies a new configuration while serving (as `SIGHUP` does for `signet serve`); throws
    /// and keeps the running one when it is refused.
    public let reloader: GatewayReloader

    /// The admin listener's server, when `adminListener` is configured.
    private let adminServer: BackgroundServer?
    /// The port of the admin listener, when there is one.
    public var adminPort: Int? { adminServer?.port }

    /// The authorization listener's server, when `authorizationListener` is configured.
    private let authorizationServer: BackgroundServer?
    /// The port of the authorization listener (forward auth, Envoy's HTTP `ext_authz`), when there is one.
    public var authorizationPort: Int? { authorizationServer?.port }
    /// The port of Envoy's gRPC `ext_authz` (`authorizationListener.grpc`), when there is one.
    public let authorizationGRPCPort: Int?

    private init(
        gateway: SignetGateway,
        server: BackgroundServer,
        adminServer: BackgroundServer?,
        authorizationServer: BackgroundServer?,
        grpcPort: Int?,
        reloader: GatewayReloader
    ) {
        self.authorizationGRPCPort = grpcPort
        self.gateway = gateway
        self.server = server
        self.adminServer = adminServer
        self.authorizationServer = authorizationServer
        self.reloader = reloader
    }

    /// Opens the configured store, assembles the gateway on it and starts serving; nothing is left
    /// open when it throws.
    public static func start(_ configuration: GatewayConfiguration, logger: Logger) async throws -> RunningGateway {
        let gateway = try await SignetGateway.open(configuration: configuration, logger: logger)
        let reloader = GatewayReloader(onHangup: false, logger: logger)
        var adminServer: BackgroundServer?
        var authorizationServer: BackgroundServer?
        do {
            if gateway.configuration.adminListener != nil {
                adminServer = try await BackgroundServer.start(logger: logger) {
                    gateway.adminApplication(reloads: reloader, onServerRunning: $0)
                }
            }
            let grpcPort = Mutex<Int?>(nil)
            if gateway.configuration.authorizationListener != nil {
                authorizationServer = try await BackgroundServer.start(logger: logger) {
                    gateway.authorizationApplication(reloads: reloader, onGRPCRunning: { port in grpcPort.withLock { $0 = port } }, onServerRunning: $0)
                }
                // The gRPC server binds beside the HTTP one: wait for its port too.
                if gateway.configuration.authorizationListener?.grpc != nil {
                    for _ in 0..<1000 where grpcPort.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(5)) }
                    guard grpcPort.withLock({ $0 }) != nil else {
                        throw ConfigurationError.invalid("authorizationListener.grpc", "authorizationListener.grpc did not start listening within 5 s")
                    }
                }
            }
            let server = try await BackgroundServer.start(logger: logger) {
                gateway.application(reloads: reloader, onServerRunning: $0)
            }
            return RunningGateway(
                gateway: gateway,
                server: server,
                adminServer: adminServer,
                authorizationServer: authorizationServer,
                grpcPort: grpcPort.withLock { $0 },
                reloader: reloader
            )
        } catch {
            await authorizationServer?.stop()
            await adminServer?.stop()
            try? await gateway.store.shutdown()
            throw error
        }
    }

    /// Stops serving (gracefully), then closes the store.
    public func stop() async throws {
        await server.stop()
        await adminServer?.stop()
        await authorizationServer?.stop()
        try await store.shutdown()
    }
}

extension SignetGateway {
    /// Opens the configured store and assembles the gateway on it; the store is closed again when
    /// the configuration is refused. Nothing is opened or written before the configuration and the
    /// files it names have been checked.
    static func open(configuration: GatewayConfiguration, logger: Logger) async throws -> SignetGateway {
        try configuration.validate()
        try configuration.checkFiles()
        let store = try await configuration.store.open(logger: logger)
        do {
            return try SignetGateway(configuration: configuration, store: store, logger: logger, clock: Date.init, continuing: nil, validated: true)
        } catch {
            try? await store.shutdown()
            throw error
        }
    }

    /// Opens the configured store, assembles the gateway and serves in the foreground until
    /// `SIGTERM`/`SIGINT`; the store is closed however it ends.
    ///
    /// With `reload`, `SIGHUP` reads the configuration again through it and applies it
    /// (``GatewayReloader``).
    public static func serve(
        configuration: GatewayConfiguration,
        logger: Logger,
        reload: (@Sendable () throws -> GatewayConfiguration)? = nil,
        onAdminRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        onAuthorizationRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        onAuthorizationGRPCRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        onServerRunning: @escaping @Sendable (SignetGateway, Int) async -> Void = { _, _ in }
    ) async throws {
        let gateway = try await open(configuration: configuration, logger: logger)
        let reloader = reload.map { GatewayReloader(onHangup: true, logger: logger, load: $0) }
        do {
            // The admin listener runs as a service of the client's application: one group, one
            // graceful shutdown on SIGTERM or SIGINT.
            var alongside: [any Service] = []
            if gateway.configuration.adminListener != nil {
                alongside.append(gateway.adminApplication(reloads: reloader, onServerRunning: onAdminRunning))
            }
            if gateway.configuration.authorizationListener != nil {
                alongside.append(
                    gateway.authorizationApplication(
                        reloads: reloader, onGRPCRunning: onAuthorizationGRPCRunning, onServerRunning: onAuthorizationRunning))
            }
            try await gateway.application(reloads: reloader, alongside: alongside) { await onServerRunning(gateway, $0) }
                .runService()
        } catch {
            try? await gateway.store.shutdown()
            throw error
        }
        try await gateway.store.shutdown()
    }
}
