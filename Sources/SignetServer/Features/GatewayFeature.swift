// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import HTTPTypes
import Hummingbird
import ServiceLifecycle
import SignetCore
import SignetMiddleware

/// What admits a request to a proxied route: the gate an access mode's owner builds.
typealias RouteGate = any MiddlewareProtocol<Request, Response, SignetRequestContext>

/// One capability of the gateway — registration, passwords, tokens, Play Integrity, Oblivious
/// HTTP… — in a folder of its own under `Features/`, listed once in ``FeatureRegistry``.
///
/// It is built from its part of the configuration and what the root shares (``FeatureContext``);
/// it registers the access modes it owns (``accessModes``) and builds their gates, adds its
/// endpoints to the listeners that serve them, adds signature algorithms and shared keys to the
/// request verifier, runs its background services and names its keys for the console. It knows no
/// other feature except through ``FeatureContext/feature(_:)``. ``SignetGateway`` only composes
/// them (docs/decisions.md: adding a feature, adding an access mode).
protocol GatewayFeature: Sendable {
    /// Builds the feature; `nil` when its part of the configuration is absent.
    ///
    /// - Throws: ``ConfigurationError`` (a file it needs cannot be read, a key does not parse).
    init?(_ context: FeatureContext) throws
    /// The access modes this feature owns: their names, options, checks and screening signature.
    static var accessModes: [AccessMode] { get }
    /// Algorithms the request verifier learns from this feature's settings (App Attest assertions).
    static func signatureAlgorithms(_ configuration: GatewayConfiguration) -> [any SignatureAlgorithm]
    /// Keys the request verifier takes besides registered devices' (shared secrets).
    static func sharedKeys(_ configuration: GatewayConfiguration) throws -> [KeyRecord]
    /// Checks this feature's part of the configuration, as ``GatewayConfiguration/validate()`` does
    /// for the whole, before anything is opened or built.
    ///
    /// - Throws: ``ConfigurationError`` at the key that is wrong.
    static func validate(_ configuration: GatewayConfiguration) throws
    /// Checks the files this feature reads or creates, before anything is opened or written.
    static func checkFiles(_ configuration: GatewayConfiguration, _ files: inout FileChecks)
    /// Signet's own endpoints this feature serves (`/signet/v1/tokens`), as logs and metrics name
    /// requests to them: prefixes, a longer one before a shorter one it starts with.
    static var endpoints: [String] { get }
    /// The paths of this feature only the operator surface serves, answered `404 not_found` on an
    /// apps' listener that has an admin listener beside it.
    static var operatorPaths: [(methods: [HTTPRequest.Method], path: String)] { get }
    /// What of this feature's settings only a restart applies (its fetchers and files made at
    /// start), changed between `old` and `new`: the keys, for the reload's refusal.
    static func restartOnlyChanges(from old: GatewayConfiguration, to new: GatewayConfiguration) -> [String]
    /// The gate of a route whose mode this feature owns.
    ///
    /// - Throws: ``ConfigurationError`` when this feature, as configured, cannot admit `access`.
    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate
    /// The gate of `access` for the event-loop data plane (``LoopGate``): nothing to judge
    /// (`open`), a signature verified on the connection's loop, or the feature's own
    /// authenticator run there (``authenticatingLoopGate(for:listener:)``); `nil` (the default)
    /// leaves the route's requests to ``gate(for:listener:)``.
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate?
    /// Adds the feature's own endpoints to a listener's router.
    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener)
    /// Work the feature does in the background while the gateway runs.
    func services(httpClient: HTTPClient) -> [any Service]
    /// The keys and certificates the feature holds, for the console's inventory.
    var keys: [GatewayKeyInventory.Entry] { get }
}

extension GatewayFeature {
    static var accessModes: [AccessMode] { [] }
    static func signatureAlgorithms(_ configuration: GatewayConfiguration) -> [any SignatureAlgorithm] { [] }
    static func sharedKeys(_ configuration: GatewayConfiguration) throws -> [KeyRecord] { [] }
    static func restartOnlyChanges(from old: GatewayConfiguration, to new: GatewayConfiguration) -> [String] { [] }
    static func checkFiles(_ configuration: GatewayConfiguration, _ files: inout FileChecks) {}
    static func validate(_ configuration: GatewayConfiguration) throws {}
    static var endpoints: [String] { [] }
    static var operatorPaths: [(methods: [HTTPRequest.Method], path: String)] { [] }
    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        throw ConfigurationError.invalid("routes", "routes: \(access.mode) routes are not \(Self.self)'s")
    }
    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {}
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? { nil }
    func services(httpClient: HTTPClient) -> [any Service] { [] }
    var keys: [GatewayKeyInventory.Entry] { [] }
}

/// The listener a router is built for: what it serves, and the HTTP client for calls out.
struct FeatureListener: Sendable {
    let surfaces: RouteSurfaces
    let httpClient: HTTPClient
}
