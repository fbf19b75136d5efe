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
/// Signet's own endpoints and the proxied routes).
extension SignetGateway {
    /// A listener's two stages, each replaced by a reload (``GatewayReloader``).
    struct ListenerResponders: Sendable {
        let entry: ReloadableResponder
        let judging: ReloadableResponder
        let surfaces: RouteSurfaces
    }

    /// Both stages of a listener serving `surfaces`, built from this gateway's configuration.
    func listenerResponders(httpClient: HTTPClient, surfaces: RouteSurfaces) -> ListenerResponders {
        let judging = ReloadableResponder(judgingResponder(httpClient: httpClient, surfaces: surfaces))
        return ListenerResponders(
            entry: ReloadableResponder(entryResponder(judging: judging, surfaces: surfaces)),
            judging: judging,
            surfaces: surfaces
        )
    }

    /// Makes this gateway's configuration the one in force on `listener`. The judging stage first:
    /// a request completing from now on is judged by this configuration, whenever its head came.
    func replaceResponders(of listener: ListenerResponders, httpClient: HTTPClient) {
        listener.judging.replace(with: judgingResponder(httpClient: httpClient, surfaces: listener.surfaces))
        listener.entry.replace(with: entryResponder(judging: listener.judging, surfaces: listener.surfaces))
    }

    /// Signet's endpoints and the proxied routes behind path normalisation and Oblivious HTTP.
    func judgingResponder(httpClient: HTTPClient, surfaces: RouteSurfaces) -> ReloadableResponder.Handler {
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
    func entryResponder(judging: ReloadableResponder, surfaces: RouteSurfaces) -> ReloadableResponder.Handler {
        let completion = RequestCompletionResponder(
            judging: judging,
            routes: surfaces.contains(.client) ? routes : nil,
            verifier: dependencies.requestVerifier,
            maximumBodyBytes: configuration.maxBodyBytes,
            storeTimeout: .milliseconds(configuration.storeTimeoutMilliseconds),
            // Counted where one connection carries many requests at once: behind trusted proxies
            // (many clients) and over HTTP/2 (100 streams each), so the connection limit per
            // client is a limit of its requests in progress as well.
            clientRequests: trustedProxies == nil && !configuration.offersHTTP2
                ? nil : (clientRequests, configuration.maxConnectionsPerClient),
            debug: configuration.debug,
            metrics: metrics,
            clock: clock
        )
        return ClientAddressResponder(
            inner: AccessLogResponder(inner: completion, logger: logger, metrics: metrics) { [routes] method, path in
                routes.logName(method: method, routedPath: path)
            },
            trusted: trustedProxies
        )
    }
}
