// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import Logging
import SignetCore
import SignetMiddleware

/// What operators and orchestrators reach: `/healthz` and `/readyz` everywhere; `/metrics` and the
/// console where the operator surface is served, and those paths refused on an apps' listener that
/// has an admin listener beside it; the OpenAPI document for apps.
struct OperatorFeature: GatewayFeature {
    let dependencies: FeatureDependencies
    let exposition: PrometheusExposition
    let readiness: Readiness
    /// The console, when an admin credential is configured.
    let console: OperatorConsole?

    /// Built last: the console lists every feature's keys.
    init?(_ context: FeatureContext) throws {
        let dependencies = context.dependencies
        let configuration = context.configuration
        self.dependencies = dependencies
        exposition = dependencies.exposition
        readiness = dependencies.readiness
        let keys = GatewayKeyInventory(entries: dependencies.ownKeys + context.built.flatMap(\.keys))
        // The console's own listener decides: the admin listener when there is one.
        let secure = configuration.adminListener.map { $0.tls != nil } ?? (dependencies.tls != nil)
        // Checked by `validate()` before the gateway was made.
        let adminPins = (try? configuration.adminCertificatePins()) ?? []
        if configuration.adminToken != nil || !adminPins.isEmpty {
            do {
                console = try OperatorConsole(dependencies: dependencies, adminCertificates: adminPins, secure: secure, keys: keys)
            } catch {
                // The templates are constants, parsed in the tests: not expected, but never silent.
                dependencies.logger.error("the operator console cannot start", metadata: ["error": "\(error)"])
                console = nil
            }
        } else {
            console = nil
        }
    }

    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        router.get("/healthz") { _, _ in "ok\n" }
        // Everywhere, as `/healthz`: a balancer probes the port it sends traffic to, and with an
        // admin listener it would otherwise see only `/healthz`, which says `ok` with the store down.
        let readiness = self.readiness
        router.get("/readyz") { _, _ in try await readiness.response() }
        if listener.surfaces.contains(.operator) {
            console?.add(to: router)
            let (exposition, admin, clock) = (self.exposition, dependencies.admin, dependencies.clock)
            // Operators' figures, not the public's: behind the admin token (Prometheus sends it with
            // `authorization: {credentials: …}`), off without one.
            router.get("/metrics") { request, context in
                try await admin.authorize(request, source: context.clientAddress, now: clock())
                return exposition.text()
            }
        } else {
            // On the apps' listener, the operator paths answer as absent; without these, `/metrics`
            // and the console would fall to a proxied route.
            Self.refuseOperatorPaths(on: router)
        }
        if listener.surfaces.contains(.client) {
            router.get("/signet/v1/openapi.json") { _, _ in OpenAPIDocument.response() }
        }
    }

    static let endpoints = ["/signet/v1/openapi.json", "/signet/admin", "/healthz", "/readyz", "/metrics"]
    static let operatorPaths: [(methods: [HTTPRequest.Method], path: String)] = ["/metrics", "/signet/admin", "/signet/admin/**"].map {
        (SignetGateway.proxiedMethods, $0)
    }

    /// The paths only the admin listener serves (every feature's ``GatewayFeature/operatorPaths``),
    /// answered `404 not_found` on the apps' listener.
    static func refuseOperatorPaths(on router: Router<SignetRequestContext>) {
        let elsewhere: @Sendable (Request, SignetRequestContext) async throws -> Response = { _, _ in
            throw SignetError(.notFound, "no such route here: the operator surface is served on the admin listener")
        }
        for (methods, path) in FeatureRegistry.types.flatMap({ $0.operatorPaths }) {
            for method in methods { router.on(RouterPath(path), method: method, use: elsewhere) }
        }
    }
}
