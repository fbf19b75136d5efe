// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import HummingbirdCore
import Hummingbird
import SignetMiddleware

/// The authorization listener: the route table judged for another proxy in front (forward auth,
/// Envoy's `ext_authz` over HTTP), with the routes, gates, policy, nonce store, limits and
/// reason codes of Signet's own proxy. Only the last step differs: a verdict instead of the
/// upstream.
extension SignetGateway {
    /// The routes behind path normalisation, each gate behind an ``ExternalAuthorizationGate``,
    /// answering ``ExternalAuthorization/allowed(context:)`` where the gate lets a request through.
    /// None of Signet's own endpoints: the proxy sends `/signet/` to the apps' listener.
    func authorizationJudgingResponder(httpClient: HTTPClient) -> ReloadableResponder.Handler {
        let router = Router(context: SignetRequestContext.self, options: [.caseInsensitive, .autoGenerateHeadEndpoints])
        router.add(middleware: ProblemMiddleware(debug: configuration.debug, metrics: metrics))
        addProxiedRoutes(to: router, listener: FeatureListener(surfaces: [], httpClient: httpClient), forAnotherProxy: true)
        return PathNormalizingResponder(router.buildResponder(), debug: configuration.debug, metrics: metrics)
    }

    /// The question read, then the access log and the wait for a complete request, as on the
    /// apps' listener (the proxy's body, where it sends one, is bounded by `maxBodyBytes`).
    func authorizationEntryResponder(judging: ReloadableResponder) -> ReloadableResponder.Handler {
        AuthorizationEntryResponder(
            inner: describedRequestResponder(judging: judging),
            trusted: trustedProxies,
            storeAnswers: storeAnswers,
            debug: configuration.debug,
            metrics: metrics
        )
    }

    /// Whether the store answers, for the listener's health checks (HTTP `/readyz`, gRPC `Health`).
    var storeAnswers: @Sendable () async -> Bool {
        { [readiness = dependencies.readiness] in await readiness.report().store }
    }

    /// What judges a request another proxy described, once the question is read: the access log,
    /// the wait for a complete request, `judging`, and the reason code in `Signet-Reason`.
    func describedRequestResponder(judging: ReloadableResponder) -> AccessLogResponder<RefusalReasonField<RequestCompletionResponder>> {
        accessLog(RefusalReasonField(inner: completionResponder(judging: judging, routes: routes, clientRequests: nil)))
    }

    /// The authorization listener's application, on the store, metrics and services of
    /// ``application(httpClient:reloads:alongside:onServerRunning:)``. Only where
    /// `authorizationListener` is configured.
    ///
    /// With `authorizationListener.grpc`, Envoy's gRPC service runs as a service of this
    /// application; `onGRPCRunning` receives its bound port.
    public func authorizationApplication(
        httpClient: HTTPClient = .shared,
        reloads: GatewayReloader? = nil,
        onGRPCRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        guard let listener = configuration.authorizationListener, let server = listeners.authorizationServer else {
            preconditionFailure("authorizationApplication() without an authorizationListener in the configuration")
        }
        let responders = listenerResponders(httpClient: httpClient, kind: .authorization)
        reloads?.attach(gateway: self, listener: responders, httpClient: httpClient)
        var app = Application(
            responder: responders.entry,
            server: server,
            configuration: .init(
                address: .hostname(listener.listen.host, port: listener.listen.port),
                serverName: "signet",
                availableConnectionsDelegate: MaximumAvailableConnections(configuration.connectionLimit)
            ),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        if let grpc = listener.grpc {
            let described = listenerResponders(httpClient: httpClient, kind: .envoyGRPC)
            reloads?.attach(gateway: self, listener: described, httpClient: httpClient)
            let service = EnvoyAuthorizationService(responder: described.entry, debug: configuration.debug, metrics: metrics, logger: logger)
            app.addServices(
                EnvoyAuthorizationServer(
                    listen: grpc,
                    tls: listeners.authorizationServed,
                    service: service,
                    health: AuthorizationHealthService(storeAnswers: storeAnswers),
                    onServerRunning: onGRPCRunning))
        }
        return app
    }
}
