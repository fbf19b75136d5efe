// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import SignetAppAttest
import SignetCore
import SignetMiddleware
import SignetStore
import SwiftASN1
import X509

/// The Signet gateway: registration routes, `/healthz`, `/metrics`, and a verifying reverse proxy in
/// front of the configured upstream.
///
/// Assembled in one place (``RunningGateway/start(_:logger:)`` in the background,
/// ``SignetGateway/serve(configuration:logger:reload:onAdminRunning:onAuthorizationRunning:onAuthorizationGRPCRunning:onServerRunning:)`` in the foreground), which opens the
/// configured store first:
///
/// ```swift
/// let running = try await RunningGateway.start(configuration, logger: logger)
/// defer { … try await running.stop() }
/// ```
public struct SignetGateway: Sendable {
    public let configuration: GatewayConfiguration
    public let store: any SignetStorage
    public let metrics: SignetMetrics
    let exposition: PrometheusExposition
    /// The operator console's counts and refusals, flushed into the store every second.
    let activity: ActivityRecorder
    public let logger: Logger
    /// What every feature shares: store, metrics, clock, admin credential, request verifier.
    let dependencies: FeatureDependencies
    /// The capabilities, each from its part of the configuration (``GatewayFeature``).
    let features: [any GatewayFeature]
    let routes: RouteTable
    let responseSigner: MessageSigner?
    /// Kept-alive connections to the upstream.
    let upstream: any UpstreamTransport
    /// The proxies whose word on the client's address is taken.
    let trustedProxies: TrustedProxies?
    /// Requests in progress per client behind trusted proxies; kept by a reload.
    let clientRequests: ClientRequestLimiter
    /// TLS and the HTTP servers of both listeners; kept by a reload.
    let listeners: GatewayListeners
    /// At a reload, the certificates read again from their files, served once it commits.
    let certificateRenewal: GatewayListeners.Renewal?
    /// The served certificate when the gateway speaks HTTPS.
    public var tls: GatewayTLS? { listeners.tls }
    /// The admin listener's served certificate, when it speaks HTTPS.
    public var adminTLS: GatewayTLS? { listeners.adminTLS }
    var clock: @Sendable () -> Date { dependencies.clock }
    var admin: AdminAccess { dependencies.admin }
    var keyCache: DeviceKeyCache { dependencies.keyCache }
    /// The device CA when client certificates are issued.
    public var deviceCA: DeviceCertificateAuthority? { feature(ClientCertificatesFeature.self)?.deviceCA }
    /// The Oblivious HTTP keys, when `ohttp` is configured.
    public var ohttpKeys: OHTTPKeySet? { feature(ObliviousHTTPFeature.self)?.keySet }
    /// Password login (Digest, Basic) and user accounts, when `passwords` is configured.
    public var passwordLogin: PasswordAuthenticator? { feature(PasswordsFeature.self)?.login }
    /// Mints app tokens, when `tokens` is configured.
    public var tokenIssuer: AppTokenIssuer? { feature(TokensFeature.self)?.issuer }

    /// A configured feature.
    func feature<Feature: GatewayFeature>(_ type: Feature.Type) -> Feature? {
        features.lazy.compactMap { $0 as? Feature }.first
    }

    /// The configured feature of type `owner` (an access mode's, from the registry).
    func feature(ownedBy owner: any GatewayFeature.Type) -> (any GatewayFeature)? {
        features.first { ObjectIdentifier(type(of: $0)) == ObjectIdentifier(owner) }
    }
    /// What the client listener serves: everything, unless the operators have a listener of their own.
    var clientSurfaces: RouteSurfaces { configuration.adminListener == nil ? .all : .client }

    public init(
        configuration: GatewayConfiguration,
        store: any SignetStorage,
        logger: Logger,
        clock: @escaping @Sendable () -> Date = Date.init
    ) throws {
        try self.init(configuration: configuration, store: store, logger: logger, clock: clock, continuing: nil)
    }

    /// A gateway whose proxied requests go to `upstream` rather than over sockets to the configured
    /// one: router tests, which then see what was forwarded.
    package init(
        configuration: GatewayConfiguration,
        store: any SignetStorage,
        logger: Logger,
        clock: @escaping @Sendable () -> Date = Date.init,
        upstream: any UpstreamTransport
    ) throws {
        try self.init(configuration: configuration, store: store, logger: logger, clock: clock, continuing: nil, upstream: upstream)
    }

    /// A gateway for `configuration` that carries on from `previous` (a reload, ``GatewayReloader``):
    /// the console's activity, the metrics, the upstream's connections, the servers and, while
    /// `passwords` is unchanged, the login limits stay; everything else is built anew.
    ///
    /// - Parameter validated: The caller validated `configuration` already (a start, a reload):
    ///   it is not validated again.
    init(
        configuration: GatewayConfiguration,
        store: any SignetStorage,
        logger: Logger,
        clock: @escaping @Sendable () -> Date,
        continuing previous: SignetGateway?,
        upstream transport: (any UpstreamTransport)? = nil,
        validated: Bool = false
    ) throws {
        if !validated { try configuration.validate() }
        self.configuration = configuration
        self.logger = logger
        activity = previous?.activity ?? ActivityRecorder(instance: configuration.instanceName, clock: clock)
        exposition = previous?.exposition ?? PrometheusExposition(activity: activity)
        metrics = exposition.metrics
        if previous == nil { metrics.prepareReloadCounts() }
        // Every operation bounded, none attempted while the store is known down (a reload keeps
        // what is known).
        let store = StoreGuard.guarding(
            store,
            timeout: .milliseconds(configuration.storeTimeoutMilliseconds),
            metrics: metrics,
            logger: logger
        )
        self.store = store
        routes = try RouteTable(configuration.routes)
        upstream = try transport ?? previous?.upstream ?? UpstreamClient(origin: UpstreamOrigin(parsing: configuration.upstream))
        trustedProxies = try configuration.proxies()
        clientRequests = previous?.clientRequests ?? ClientRequestLimiter()

        // What verifies requests: the features' shared keys and registered devices' keys, with
        // the algorithms the features add (App Attest's assertions).
        var sharedKeys = KeyRing()
        for type in FeatureRegistry.types {
            for key in try type.sharedKeys(configuration) { sharedKeys.add(key) }
        }
        let keyCache = DeviceKeyCache(
            StoreKeyResolver(
                devices: store,
                sharedSecrets: sharedKeys,
                metrics: metrics,
                acceptsDebugDevices: configuration.allowDebugDevices
            ),
            lifetime: .milliseconds(configuration.deviceCacheMilliseconds)
        )
        let requestVerifier = try SignetRequestVerifier(
            configuration,
            store: store,
            metrics: metrics,
            keyCache: keyCache,
            algorithms: FeatureRegistry.types.flatMap { $0.signatureAlgorithms(configuration) }
        )

        // A reload keeps the servers; a development certificate without files is never made anew.
        let listeners = try previous?.listeners ?? GatewayListeners(configuration, trustedProxies: trustedProxies)
        self.listeners = listeners
        // A reload reads the certificate files again; the reloader serves them once it commits.
        certificateRenewal = try previous.map { _ in try listeners.renewal(for: configuration) }
        let tls = certificateRenewal?.tls ?? listeners.tls
        // Made on first start only: at a reload, a new key under the same key id would fail every
        // client that pinned the published one.
        responseSigner = try configuration.responseSigning.map { try MessageSigner(gatewayResponses: $0, create: previous == nil) }
        var ownKeys: [GatewayKeyInventory.Entry] = []
        if let signing = configuration.responseSigning, let responseSigner {
            ownKeys.append(.init(role: "response signing", name: signing.keyId, algorithm: responseSigner.algorithm.name))
        }
        if let leaf = tls?.chain.first { ownKeys.append(GatewayKeyInventory.certificate("TLS certificate", leaf)) }

        dependencies = FeatureDependencies(
            configuration: configuration,
            store: store,
            metrics: metrics,
            exposition: exposition,
            logger: logger,
            clock: clock,
            // The failed-credential counts outlive a reload that keeps the token: a guesser gets no
            // fresh allowance from an operator's SIGHUP.
            admin: previous.flatMap { $0.configuration.adminToken == configuration.adminToken ? $0.admin : nil }
                ?? AdminAccess(token: configuration.adminToken, store: store),
            keyCache: keyCache,
            requestVerifier: requestVerifier,
            tls: tls,
            readiness: Readiness(store: store, upstream: upstream),
            ownKeys: ownKeys
        )

        // The features, each from its part of the configuration, in the registry's order.
        var features: [any GatewayFeature] = []
        for type in FeatureRegistry.types {
            let context = FeatureContext(
                dependencies: dependencies,
                built: features,
                previous: previous?.features ?? [],
                previousConfiguration: previous?.configuration
            )
            if let feature = try type.init(context) { features.append(feature) }
        }
        self.features = features
        try checkRouteOwners(configuration.routes)
        // Last: a configuration refused on the way never shows as the one in force.
        exposition.configurationLoaded(configuration)
    }

    /// Every route's access mode has its owner among the configured features, and its check
    /// passes (``AccessMode/check``). A route without one is a ``ConfigurationError`` at
    /// `routes[i].access`, so no route is ever left out of the table — where its requests would
    /// fall to the route above it (an `open` `/`).
    package func checkRouteOwners(_ routes: [GatewayConfiguration.Route]) throws {
        for (index, route) in routes.enumerated() {
            let at = "routes[\(index)]"
            let owner = try AccessModeRegistry.check(route, at: at, in: configuration)
            guard feature(ownedBy: owner) != nil else {
                throw ConfigurationError.invalid(
                    "\(at).access",
                    "\(at).access: \(route.access.mode) routes need their feature configured; no part of this configuration admits them"
                )
            }
        }
    }

    /// Methods the gateway proxies; others answer `not_found`.
    static let proxiedMethods: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete, .head, .options]
}

