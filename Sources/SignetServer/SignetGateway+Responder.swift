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
        SignetRegistrationRoutes<SignetRequestContext>(
            store: store,
            configuration: configuration.registration,
            metrics: metrics,
            keyCache: keyCache,
            attestationVerifier: attestationVerifier,
            certificateIssuer: deviceCA,
            login: passwordLogin,
            admin: admin,
            clock: clock
        ).add(to: router, surfaces: surfaces)
        if let passwordLogin, surfaces.contains(.operator) {
            SignetAccountRoutes<SignetRequestContext>(
                authenticator: passwordLogin,
                store: store,
                admin: admin,
                keyCache: keyCache,
                clock: clock
            ).add(to: router)
        }
        PinReportRoutes<SignetRequestContext>(
            store: store,
            limiter: SourceRateLimiter(limit: configuration.pinReportsPerSourcePerMinute),
            admin: admin,
            metrics: metrics,
            maximumGroups: configuration.maxPinReportGroups,
            clock: clock
        ).add(to: router, surfaces: surfaces)
        router.get("/healthz") { _, _ in "ok\n" }
        if surfaces.contains(.operator) {
            addConsole(to: router)
            let readiness = Readiness(store: store, upstream: upstream)
            router.get("/readyz") { _, _ in try await readiness.response() }
            let exposition = self.exposition
            // Operators' figures, not the public's: behind the admin token (Prometheus sends it with
            // `authorization: {credentials: …}`), off without one.
            router.get("/metrics") { [admin, clock] request, context in
                try admin.authorize(request, source: context.clientAddress, now: clock())
                return exposition.text()
            }
        } else {
            // On the apps' listener, the operator paths answer as absent; without these, `/metrics`
            // and `/readyz` would fall to a proxied route.
            Self.refuseOperatorPaths(on: router)
        }
        guard surfaces.contains(.client) else {
            return chain(PathNormalizingResponder(router.buildResponder(), debug: configuration.debug, metrics: metrics))
        }
        trustDocument?.add(to: router)
        addTokenRoutes(to: router)
        router.get("/signet/v1/openapi.json") { _, _ in OpenAPIDocument.response() }
        let firebase = configuration.firebaseAppCheck.map {
            FirebaseAppCheckVerifier(
                projectNumber: $0.projectNumber,
                appIDs: $0.appIds.map(Set.init),
                jwksURL: $0.jwksUrl ?? FirebaseAppCheckVerifier.googleJWKS,
                client: httpClient,
                logger: logger,
                nonces: store
            )
        }
        addProxiedRoutes(to: router, proxy: proxy, firebase: firebase)
        let responder = ObliviousGatewayResponder(
                inner: PathNormalizingResponder(router.buildResponder(), debug: configuration.debug, metrics: metrics),
                keys: ohttpKeys,
                replay: store,
                replayWindow: TimeInterval(configuration.ohttp?.replayWindow ?? 300),
                failures: SourceRateLimiter(limit: configuration.ohttp?.failuresPerMinute ?? 30),
                requests: SourceRateLimiter(limit: configuration.ohttp?.requestsPerMinute ?? 600),
                maximumRequestBytes: configuration.maxBodyBytes,
                maximumResponseBytes: 8 << 20,
                debug: configuration.debug,
                metrics: metrics,
                clock: clock
            )
        return chain(responder)
    }

    /// `inner` behind the client's address and the access log, as a reloadable handler.
    func chain<Inner: HTTPResponder>(_ inner: Inner) -> ReloadableResponder.Handler
    where Inner.Context == SignetRequestContext {
        let chain = ClientAddressResponder(
            inner: AccessLogResponder(inner: inner, logger: logger, metrics: metrics) { [routes] method, path in
                routes.logName(method: method, routedPath: path)
            },
            trusted: trustedProxies
        )
        return { request, context in try await chain.respond(to: request, context: context) }
    }

    /// The paths only the admin listener serves, answered `404 not_found` on the apps' listener.
    static func refuseOperatorPaths(on router: Router<SignetRequestContext>) {
        let elsewhere: @Sendable (Request, SignetRequestContext) async throws -> Response = { _, _ in
            throw SignetError(.notFound, "no such route here: the operator surface is served on the admin listener")
        }
        for path in ["/metrics", "/readyz", "/signet/admin", "/signet/admin/**", "/signet/v1/users/:name", "/signet/v1/devices/:id"] {
            for method in proxiedMethods where !(path == "/signet/v1/devices/:id" && method == .post) {
                router.on(RouterPath(path), method: method, use: elsewhere)
            }
        }
        router.get("/signet/v1/pin-reports", use: elsewhere)
    }
}
