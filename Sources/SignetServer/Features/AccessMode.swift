// SPDX-License-Identifier: Apache-2.0
import SignetMiddleware

/// An access mode as the feature that owns it registers it (``GatewayFeature/accessModes``): the
/// name a route gives in `access`, the options such a route may carry, what the rest of the
/// configuration must hold for it, and the signature a request must carry before its body is read.
/// The owner builds the gate (``GatewayFeature/gate(for:listener:)``); the registry
/// (``AccessModeRegistry``) finds the owner. Nothing else in the gateway names a mode.
struct AccessMode: Sendable {
    /// One option a route of this mode may carry, beside `prefix`, `methods` and `access`.
    struct Option: Sendable {
        enum Kind: Sendable { case string, bool }
        let name: String
        let kind: Kind
        /// Needed on every route of the mode.
        var required = false
        /// What the option names, for the error when a required one is missing.
        var purpose = ""
    }

    /// How the configuration spells it: `app-token`.
    let name: String
    /// The route options it takes, in the order the route table prints them.
    var options: [Option] = []
    /// Who the options are for, in an error about one given elsewhere: `password routes`.
    var optionsAreFor: String { optionsOwner ?? "\(name) routes" }
    var optionsOwner: String?
    /// What a request's signature must meet, for modes that take one: the gateway checks it when
    /// the head arrives (``RequestCompletionResponder``), before it reads a body.
    var signature: AccessRequirement?
    /// Why a route of this mode cannot be `monitor`ed, when it cannot: its gate changes the
    /// request it admits or answers with a challenge, so forwarding it unjudged would not be what
    /// enforcing forwards. `nil`: it can.
    var notMonitorable: String?
    /// Why another proxy cannot have a route of this mode judged through the authorization
    /// listener (forward auth, Envoy's ext_authz), when it cannot: its gate reads what only
    /// Signet's own listener has (the client's TLS certificate) or changes the request it admits,
    /// which a verdict cannot carry. `nil`: it can.
    var notExternallyAuthorizable: String?
    /// The same for a route of this mode with these options, when only some options need Signet's
    /// own proxy (a DPoP-bound `app-token` route keeps its token and proof from the upstream,
    /// which a verdict cannot do).
    var notExternallyAuthorizableWith: @Sendable (_ access: GatewayConfiguration.Route.Access) -> String? = { _ in nil }
    /// Whether the gate checks the body (the signature's `Content-Digest`): through the
    /// authorization listener, a request with a body the proxy did not send is then refused
    /// `body_not_forwarded` rather than judged without it.
    var checksBody: Bool { signature != nil }
    /// Checks a route of this mode against the rest of the configuration, at `at` (`routes[2]`):
    /// its feature configured, its options consistent with the feature's settings.
    ///
    /// - Throws: ``ConfigurationError``.
    var check: @Sendable (_ route: GatewayConfiguration.Route, _ configuration: GatewayConfiguration, _ at: String) throws -> Void = { _, _, _ in }

    /// A check that `needs` is configured: `"routes[0].access: app-token routes need tokens"`.
    static func needs(_ what: String, _ configured: @escaping @Sendable (GatewayConfiguration) -> Bool) -> @Sendable (
        GatewayConfiguration.Route, GatewayConfiguration, String
    ) throws -> Void {
        { route, configuration, at in
            guard configured(configuration) else {
                throw ConfigurationError.invalid("\(at).access", "\(at).access: \(route.access.mode) routes need \(what)")
            }
        }
    }
}
