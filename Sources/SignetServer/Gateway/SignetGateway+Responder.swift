// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Hummingbird
import ServiceLifecycle
import SignetAppAttest
import SignetCore
import SignetMiddleware

/// What answers requests on a listener, in two stages: the entry (the client's address, the access
/// log, and ``RequestCompletionResponder``, which waits for the request to be complete), then the
/// judging stage in force at that moment (Oblivious HTTP, path normalisation, the router of
/// Signet's own endpoints and the proxied routes). On the authorization listener the entry first
/// reads which request another proxy asks about (`SignetGateway+Authorization.swift`).
extension SignetGateway {
    /// What a listener answers: Signet's endpoints of `surfaces` and, with `.client`, the proxied
    /// routes; or, on the authorization listener, the routes judged for another proxy.
    enum ListenerKind: Sendable, Equatable {
        case endpoints(RouteSurfaces)
        /// Forward auth and Envoy's HTTP service: the question read from the request first.
        case authorization
        /// Envoy's gRPC service: the question read from the check before the entry.
        case envoyGRPC
    }

    /// A listener's two stages, each replaced by a reload (``GatewayReloader``).
    struct ListenerResponders: Sendable {
        let entry: ReloadableResponder
        let judging: ReloadableResponder
        let kind: ListenerKind
    }

    /// Both stages of a listener of `kind`, built from this gateway's configuration.
    func listenerResponders(httpClient: HTTPClient, kind: ListenerKind) -> ListenerResponders {
        installDataPlane(kind: kind, httpClient: httpClient)
        let judging = ReloadableResponder(judgingResponder(httpClient: httpClient, kind: kind))
        return ListenerResponders(
            entry: ReloadableResponder(entryResponder(judging: judging, kind: kind)),
            judging: judging,
            kind: kind
        )
    }

    /// Makes this gateway's configuration the one in force on `listener`. The judging stage first:
    /// a request completing from now on is judged by this configuration, whenever its head came.
    func replaceResponders(of listener: ListenerResponders, httpClient: HTTPClient) {
        listener.judging.replace(with: judgingResponder(httpClient: httpClient, kind: listener.kind))
        installDataPlane(kind: listener.kind, httpClient: httpClient)
        listener.entry.replace(with: entryResponder(judging: listener.judging, kind: listener.kind))
    }

    /// On the apps' listener, this configuration's event-loop data plane.
    private func installDataPlane(kind: ListenerKind, httpClient: HTTPClient) {
        guard case .endpoints(let surfaces) = kind, surfaces.contains(.client) else { return }
        listeners.dataPlane.replace(with: dataPlaneSnapshot(listener: FeatureListener(surfaces: surfaces, httpClient: httpClient)))
    }

    func judgingResponder(httpClient: HTTPClient, kind: ListenerKind) -> ReloadableResponder.Handler {
        switch kind {
        case .endpoints(let surfaces): judgingResponder(httpClient: httpClient, surfaces: surfaces)
        case .authorization, .envoyGRPC: authorizationJudgingResponder(httpClient: httpClient)
        }
    }

    func entryResponder(judging: ReloadableResponder, kind: ListenerKind) -> ReloadableResponder.Handler {
        switch kind {
        case .endpoints(let surfaces): entryResponder(judging: judging, surfaces: surfaces)
        case .authorization: authorizationEntryResponder(judging: judging)
        case .envoyGRPC: describedRequestResponder(judging: judging)
        }
    }

    /// Signet's endpoints and the proxied routes behind path normalisation and Oblivious HTTP.
    private func judgingResponder(httpClient: HTTPClient, surfaces: RouteSurfaces) -> ReloadableResponder.Handler {
        // Case-insensitive like the upstreams most in need of it (Express, ASP.NET Core, IIS), so
        // `/ADMIN` cannot slip past the rule for `/admin`; the route table matches the same way.
        // HEAD wherever GET is served (RFC 9110 §9.3.2), Signet's own endpoints included.
        let router = Router(context: SignetRequestContext.self, options: [.caseInsensitive, .autoGenerateHeadEndpoints])
        router.add(middleware: ProblemMiddleware(debug: configuration.debug, metrics: metrics))
        let listener = FeatureListener(surfaces: surfaces, httpClient: httpClient)
        for feature in features { feature.addRoutes(to: router, listener: listener) }
        router.refuseOtherMethods(under: RouteTable.reservedSegments)
        if surfaces.contains(.client) { addProxiedRoutes(to: router, listener: listener) }
        let routed = PathNormalizingResponder(router.buildResponder(), debug: configuration.debug, metrics: metrics)
        // Oblivious HTTP decapsulates in front of everything else the apps' listener does.
        if surfaces.contains(.client), let oblivious = feature(ObliviousHTTPFeature.self) { return oblivious.wrapping(routed) }
        return routed
    }

    /// The client's address, the access log and the wait for a complete request, in front of
    /// `judging`.
    private func entryResponder(judging: ReloadableResponder, surfaces: RouteSurfaces) -> ReloadableResponder.Handler {
        let completion = completionResponder(
            judging: judging,
            routes: surfaces.contains(.client) ? routes : nil,
            // Counted where one connection carries many requests at once: behind trusted proxies
            // (many clients) and over HTTP/2 (100 streams each), so the connection limit per
            // client is a limit of its requests in progress as well.
            clientRequests: trustedProxies == nil && !configuration.offersHTTP2
                ? nil : (clientRequests, configuration.maxConnectionsPerClient)
        )
        return ClientAddressResponder(inner: accessLog(completion), trusted: trustedProxies)
    }

    /// The wait for a complete request, in front of `judging`, with this configuration's bounds.
    func completionResponder(
        judging: ReloadableResponder,
        routes: RouteTable?,
        clientRequests: (limiter: ClientRequestLimiter, perClient: Int)?
    ) -> RequestCompletionResponder {
        RequestCompletionResponder(
            judging: judging,
            routes: routes,
            verifier: dependencies.requestVerifier,
            maximumBodyBytes: configuration.maxBodyBytes,
            storeTimeout: .milliseconds(configuration.storeTimeoutMilliseconds),
            clientRequests: clientRequests,
            debug: configuration.debug,
            metrics: metrics,
            clock: clock
        )
    }

    /// One access-log line and the exchange's metrics for each request `inner` answers.
    func accessLog<Inner: HTTPResponder>(_ inner: Inner) -> AccessLogResponder<Inner> {
        AccessLogResponder(inner: inner, log: accessLog)
    }

    /// This configuration's access log: its routes name the lines.
    var accessLog: AccessLog {
        AccessLog(logger: logger, metrics: metrics) { [routes] method, path in
            routes.logName(method: method, routedPath: path)
        }
    }
}
