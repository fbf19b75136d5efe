// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetMiddleware

/// Password login (HTTP Digest, Basic over TLS): the gate of `password` and `password-or-device`
/// routes, and the user accounts on the operator surface.
struct PasswordsFeature: GatewayFeature {
    static let accessModes: [AccessMode] = ["password", "password-or-device"].map { name in
        AccessMode(
            name: name,
            options: [.init(name: "digestMD5", kind: .bool), .init(name: "requireAuthInt", kind: .bool), .init(name: "keepAuthorization", kind: .bool)],
            optionsOwner: "password routes",
            notMonitorable: "its gate takes the password out of the request and answers a challenge a client needs to log in",
            notExternallyAuthorizable: "its gate takes the password out of the request the upstream receives",
            check: { route, configuration, at in try GatewayConfiguration.checkPasswordRoute(route, configuration, at: at) }
        )
    }

    let dependencies: FeatureDependencies
    let login: PasswordAuthenticator

    /// `nil` without `passwords`. A reload that leaves `passwords` (and the scheme clients use) as
    /// it was keeps the running authenticator, and with it the failed attempts: a SIGHUP unlocks no one.
    init?(_ context: FeatureContext) throws {
        let configuration = context.configuration
        guard let loginConfiguration = configuration.passwordLogin else { return nil }
        dependencies = context.dependencies
        if let previous = context.previous(Self.self), let previousConfiguration = context.previousConfiguration,
            previousConfiguration.passwords == configuration.passwords,
            // Whether Basic is taken depends on the scheme clients use, which a reload may change.
            previousConfiguration.signedScheme == configuration.signedScheme
        {
            login = previous.login
        } else {
            login = try PasswordAuthenticator(configuration: loginConfiguration, store: dependencies.store)
        }
    }

    /// The accounts, by name (`/signet/v1/users/{name}`); written in two parts, as no route
    /// serves the bare prefix.
    static let endpoints = ["/signet/v1/" + "users"]

    static func validate(_ configuration: GatewayConfiguration) throws { try configuration.validatePasswords() }
    /// The user accounts.
    static let operatorPaths: [(methods: [HTTPRequest.Method], path: String)] = [(SignetGateway.proxiedMethods, "/signet/v1/users/:name")]

    /// A password route's options.
    static func options(_ access: GatewayConfiguration.Route.Access) -> PasswordRouteOptions {
        PasswordRouteOptions(
            allowMD5: access.flag("digestMD5"),
            requireAuthInt: access.flag("requireAuthInt"),
            keepAuthorization: access.flag("keepAuthorization")
        )
    }

    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        guard listener.surfaces.contains(.operator) else { return }
        let d = dependencies
        SignetAccountRoutes<SignetRequestContext>(authenticator: login, store: d.store, admin: d.admin, keyCache: d.keyCache, clock: d.clock)
            .add(to: router)
    }

    /// `password`: the login alone; `password-or-device`: or a signature of a device registered
    /// after a login.
    func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) throws -> RouteGate {
        let d = dependencies
        return PasswordLoginMiddleware(
            authenticator: login,
            route: Self.options(access),
            signatures: access.mode == "password-or-device" ? d.requestVerifier : nil,
            metrics: d.metrics,
            maximumBodyBytes: d.configuration.maxBodyBytes,
            clock: d.clock
        )
    }

    /// The same gate, run by the event-loop data plane (``LoopAuthenticator``); an `auth-int`
    /// login's answer held whole there for its proof.
    func loopGate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> LoopGate? {
        authenticatingLoopGate(for: access, listener: listener)
    }
}
