// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Logging
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// The route table's proxied routes: each with the middleware its access mode calls for, then
/// ``GatewayProxy``.
extension SignetGateway {
    /// The largest upstream answer the gateway holds whole: one it signs (its digest needs the whole
    /// body) or one it encapsulates for Oblivious HTTP.
    static let maximumBufferedResponseBytes = 8 << 20

    var proxy: GatewayProxy {
        GatewayProxy(
            upstream: upstream,
            responseSigner: responseSigner,
            maximumBodyBytes: configuration.maxBodyBytes,
            maximumSignedResponseBytes: Self.maximumBufferedResponseBytes,
            timeout: .seconds(Int64(configuration.upstreamTimeoutSeconds)),
            publicScheme: configuration.signedScheme,
            publicAuthority: configuration.publicAuthority,
            clock: clock
        )
    }

    /// The route table as Hummingbird routes: each behind the gate its access mode's owner builds
    /// (``GatewayFeature/gate(for:listener:)``) — watched by a ``MonitoredGate`` on a `monitor`
    /// route — then the proxy. One middleware group per distinct access (mode and options) and
    /// route mode.
    ///
    /// For another proxy (the authorization listener), each gate is behind an
    /// ``ExternalAuthorizationGate`` and what follows it is the verdict
    /// (``ExternalAuthorization/allowed(context:)``) instead of the upstream.
    func addProxiedRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener, forAnotherProxy: Bool = false) {
        let proxy = self.proxy
        var groups: [RouteGroupKey: RouterGroup<SignetRequestContext>] = [:]
        for registration in routes.registrations(methods: Self.proxiedMethods.map(\.rawValue)) {
            let key = RouteGroupKey(access: registration.access, mode: registration.mode)
            if groups[key] == nil {
                var gate = gate(for: registration.access, listener: listener)
                if forAnotherProxy {
                    gate = ExternalAuthorizationGate(gate: gate, mode: AccessModeRegistry.mode(named: registration.access.mode), access: registration.access)
                }
                groups[key] = router.group().add(middleware: registration.mode == .monitor ? MonitoredGate(gate: gate, metrics: metrics) : gate)
            }
            let path = RouterPath(registration.path)
            let method = HTTPRequest.Method(registration.method)!
            if forAnotherProxy {
                groups[key]!.on(path, method: method) { _, context in ExternalAuthorization.allowed(context: context) }
            } else {
                groups[key]!.on(path, method: method) { request, context in try await proxy.forward(request, context: context) }
            }
        }
    }

    /// The owner's gate. `checkRouteOwners()` refused to start without an owner; should a gate
    /// still fail to build, the route refuses every request rather than fall to the route above it.
    private func gate(for access: GatewayConfiguration.Route.Access, listener: FeatureListener) -> RouteGate {
        do {
            guard let owner = AccessModeRegistry.owner(of: access.mode), let feature = feature(ownedBy: owner) else {
                throw ConfigurationError.invalid("routes", "routes: \(access.mode) has no owner")
            }
            return try feature.gate(for: access, listener: listener)
        } catch {
            logger.error("a route's gate cannot be built; its requests are refused", metadata: ["access": "\(access.mode)", "error": "\(error)"])
            return UnownedRouteMiddleware(logger: logger)
        }
    }
}

private struct RouteGroupKey: Hashable {
    var access: GatewayConfiguration.Route.Access
    var mode: GatewayConfiguration.Route.Mode
}

/// What stands in for a gate its owner could not build: every request refused `internal_error`, logged.
struct UnownedRouteMiddleware: RouterMiddleware {
    typealias Context = SignetRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        logger.error("no feature admits this route's access mode; refused", metadata: ["path": "\(request.uri.path)"])
        throw SignetError(.internalError, "this route's access mode has no owner")
    }
}
