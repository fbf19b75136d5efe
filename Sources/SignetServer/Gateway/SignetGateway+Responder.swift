// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Hummingbird
import ServiceLifecycle
import SignetAppAttest
import SignetCore
import SignetMiddleware

/// What answers requests on a listener: the router of Signet's own endpoints and the proxied
/// routes, behind path normalisation, Oblivious HTTP, the access log and the client's address.
extension SignetGateway {
    /// Everything that answers a request on a listener serving `surfaces`, built from this
    /// gateway's configuration: a reload builds another from the new one and swaps it in
    /// (``ReloadableResponder``).
    func responder(httpClient: HTTPClient, surfaces: RouteSurfaces) -> ReloadableResponder.Handler {
        // Case-insensitive like the upstreams most in need of it (Express, ASP.NET Core, IIS), so
        // `/ADMIN` cannot slip past the rule for `/admin`; the route table matches the same way.
        let router = Router(context: SignetRequestContext.self, options: .caseInsensitive)
        router.add(middleware: ProblemMiddleware(debug: configuration.debug, metrics: metrics))
        let listener = FeatureListener(surfaces: surfaces, httpClient: httpClient)
        for feature in features { feature.addRoutes(to: router, listener: listener) }
        if surfaces.contains(.client) { addProxiedRoutes(to: router, listener: listener) }
        let routed = PathNormalizingResponder(router.buildResponder(), debug: configuration.debug, metrics: metrics)
        // Oblivious HTTP decapsulates in front of everything else the apps' listener does.
        if surfaces.contains(.client), let oblivious { return chain(oblivious.wrapping(routed)) }
        return chain(routed)
    }

    /// `inner` behind the client's address and the access log, as a reloadable handler.
    func chain<Inner: HTTPResponder>(_ inner: Inner) -> ReloadableResponder.Handler
    where Inner.Context == SignetRequestContext {
        ClientAddressResponder(
            inner: AccessLogResponder(inner: inner, logger: logger, metrics: metrics) { [routes] method, path in
                routes.logName(method: method, routedPath: path)
            },
            trusted: trustedProxies
        )
    }
}
