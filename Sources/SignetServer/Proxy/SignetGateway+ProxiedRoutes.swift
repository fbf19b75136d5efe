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

    /// The route table as Hummingbird routes: each behind what admits a request to it — the
    /// request verifier for signatures (`verified` and trust levels), the feature that owns any
    /// other access mode — then the proxy. One middleware group per distinct requirement.
    func addProxiedRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        let proxy = self.proxy
        var groups: [AccessRequirement: RouterGroup<SignetRequestContext>] = [:]
        for registration in routes.registrations(methods: Self.proxiedMethods.map(\.rawValue)) {
            let requirement = registration.requirement
            if groups[requirement] == nil {
                // `checkRouteOwners()` refused to start without one; should a gate still be missing,
                // the route refuses every request rather than fall to the route above it.
                let gate = gate(for: requirement, listener: listener) ?? UnownedRouteMiddleware(logger: logger)
                groups[requirement] = router.group().add(middleware: gate)
            }
            groups[requirement]!.on(RouterPath(registration.path), method: HTTPRequest.Method(registration.method)!) { request, context in
                try await proxy.forward(request, context: context)
            }
        }
    }

    private func gate(for requirement: AccessRequirement, listener: FeatureListener) -> (any MiddlewareProtocol<Request, Response, SignetRequestContext>)? {
        switch requirement {
        case .open:
            return OpenRouteMiddleware<SignetRequestContext>(metrics: metrics)
        case .verified, .trustLevel:
            return SignetVerificationMiddleware<SignetRequestContext>(
                verifier: dependencies.requestVerifier,
                requirement: requirement,
                metrics: metrics,
                clock: clock
            )
        default:
            return features.lazy.compactMap { $0.gate(for: requirement, listener: listener) }.first
        }
    }
}

/// What stands in for a gate no feature gave: every request refused `internal_error`, logged.
struct UnownedRouteMiddleware: RouterMiddleware {
    typealias Context = SignetRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        logger.error("no feature admits this route's access mode; refused", metadata: ["path": "\(request.uri.path)"])
        throw SignetError(.internalError, "this route's access mode has no owner")
    }
}
