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
    var proxy: GatewayProxy {
        GatewayProxy(
            upstream: upstream,
            responseSigner: responseSigner,
            maximumBodyBytes: configuration.maxBodyBytes,
            maximumSignedResponseBytes: 8 << 20,
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
                guard let gate = gate(for: requirement, listener: listener) else {
                    // Validation made sure what a route needs is configured; never silent.
                    logger.error("no feature admits this route; it is not served", metadata: ["prefix": "\(registration.path)"])
                    continue
                }
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
