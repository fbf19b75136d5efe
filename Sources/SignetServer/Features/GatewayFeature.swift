// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Hummingbird
import ServiceLifecycle
import SignetMiddleware

/// One capability of the gateway — registration, passwords, tokens, Oblivious HTTP… — built from
/// its part of the configuration and the shared collaborators (``FeatureDependencies``). It adds its
/// endpoints to the listeners that serve them, admits requests to the proxied routes whose access
/// mode it owns, runs its background services and names its keys for the console; it knows nothing
/// of the other features. ``SignetGateway`` only composes them (docs/decisions.md: adding a feature).
protocol GatewayFeature: Sendable {
    /// Adds the feature's own endpoints to a listener's router.
    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener)
    /// Whether this feature, as configured, owns the access mode `requirement` stands for: the
    /// gateway refuses to start with a route no feature owns (``SignetGateway/checkRouteOwners(_:)``).
    func admits(_ requirement: AccessRequirement) -> Bool
    /// What admits a request to a proxied route with `requirement`, when this feature owns it.
    func gate(for requirement: AccessRequirement, listener: FeatureListener) -> (any MiddlewareProtocol<Request, Response, SignetRequestContext>)?
    /// Work the feature does in the background while the gateway runs.
    func services(httpClient: HTTPClient) -> [any Service]
    /// The keys and certificates the feature holds, for the console's inventory.
    var keys: [GatewayKeyInventory.Entry] { get }
}

extension GatewayFeature {
    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {}
    func admits(_ requirement: AccessRequirement) -> Bool { false }
    func gate(for requirement: AccessRequirement, listener: FeatureListener) -> (any MiddlewareProtocol<Request, Response, SignetRequestContext>)? { nil }
    func services(httpClient: HTTPClient) -> [any Service] { [] }
    var keys: [GatewayKeyInventory.Entry] { [] }
}

/// The listener a router is built for: what it serves, and the HTTP client for calls out.
struct FeatureListener: Sendable {
    let surfaces: RouteSurfaces
    let httpClient: HTTPClient
}
