// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle
import SignetAppAttest
import SignetCore
import SignetMiddleware

/// The gateway as Hummingbird applications: the apps' listener, with the services both listeners
/// share, and the operators' own when `adminListener` is configured.
extension SignetGateway {
    /// The Hummingbird application; `onServerRunning` receives the bound port.
    ///
    /// One pipeline for every request: the path is normalised before routing
    /// (`PathNormalizingResponder`), Hummingbird's router picks the route — Signet's own endpoints,
    /// or a proxied route made from the route table — the route's middleware establishes the identity
    /// (`SignetVerificationMiddleware` with the requirement checked as soon as the key is known,
    /// ``ClientCertificateMiddleware``, or the legacy scheme), the proxy forwards, and
    /// `ProblemMiddleware` renders whatever was thrown, once.
    public func application(
        httpClient: HTTPClient = .shared,
        reloads: GatewayReloader? = nil,
        alongside: [any Service] = [],
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let responders = listenerResponders(httpClient: httpClient, kind: .endpoints(clientSurfaces))
        reloads?.attach(gateway: self, listener: responders, httpClient: httpClient)
        var app = Application(
            responder: responders.entry,
            server: listeners.server,
            configuration: .init(
                address: .hostname(configuration.listen.host, port: configuration.listen.port),
                serverName: "signet",
                // Past it, connections wait in the listen backlog instead of failing `accept` for
                // want of a file descriptor.
                availableConnectionsDelegate: MaximumAvailableConnections(configuration.connectionLimit)
            ),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        app.addServices(
            SweepService(store: store, interval: .seconds(configuration.sweepIntervalSeconds), logger: logger),
            ActivityFlushService(recorder: activity, store: store, interval: .seconds(1), logger: logger),
            upstream
        )
        if let reloads { app.addServices(reloads) }
        for service in alongside { app.addServices(service) }
        for feature in features { app.addServices(feature.services(httpClient: httpClient)) }
        return app
    }

    /// The admin listener's application: the console, the admin API, `/metrics` (and `/healthz`, `/readyz`, as on the apps' listener), on
    /// the same store, activity and metrics as ``application(httpClient:reloads:alongside:onServerRunning:)``,
    /// which runs the shared services. Only where `adminListener` is configured.
    public func adminApplication(
        httpClient: HTTPClient = .shared,
        reloads: GatewayReloader? = nil,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        guard let listener = configuration.adminListener, let adminServer = listeners.adminServer else {
            preconditionFailure("adminApplication() without an adminListener in the configuration")
        }
        let responders = listenerResponders(httpClient: httpClient, kind: .endpoints(.operator))
        reloads?.attach(gateway: self, listener: responders, httpClient: httpClient)
        return Application(
            responder: responders.entry,
            server: adminServer,
            configuration: .init(
                address: .hostname(listener.listen.host, port: listener.listen.port),
                serverName: "signet",
                availableConnectionsDelegate: MaximumAvailableConnections(GatewayConfiguration.adminConnectionLimit)
            ),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}
