// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetMiddleware

/// Password login (HTTP Digest, Basic over TLS): the gate of `password` and `password-or-device`
/// routes, and the user accounts on the operator surface.
struct PasswordsFeature: GatewayFeature {
    let dependencies: FeatureDependencies
    let login: PasswordAuthenticator

    /// `nil` without `passwords`. A reload that leaves `passwords` as it was keeps `previous`'s
    /// authenticator, and with it the failed attempts: a SIGHUP unlocks no one.
    init?(_ dependencies: FeatureDependencies, previous: PasswordsFeature?, previousConfiguration: GatewayConfiguration?) throws {
        let configuration = dependencies.configuration
        guard let loginConfiguration = configuration.passwordLogin else { return nil }
        self.dependencies = dependencies
        if let previous, let previousConfiguration,
            GatewayConfiguration.sameJSON(previousConfiguration.passwords, configuration.passwords)
        {
            login = previous.login
        } else {
            login = try PasswordAuthenticator(configuration: loginConfiguration, store: dependencies.store)
        }
    }

    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        guard listener.surfaces.contains(.operator) else { return }
        let d = dependencies
        SignetAccountRoutes<SignetRequestContext>(authenticator: login, store: d.store, admin: d.admin, keyCache: d.keyCache, clock: d.clock)
            .add(to: router)
    }

    func admits(_ requirement: AccessRequirement) -> Bool {
        switch requirement {
        case .password, .passwordOrDevice: true
        default: false
        }
    }

    func gate(for requirement: AccessRequirement, listener: FeatureListener) -> (any MiddlewareProtocol<Request, Response, SignetRequestContext>)? {
        let d = dependencies
        switch requirement {
        case .password(let options):
            return PasswordLoginMiddleware(
                authenticator: login, route: options, signatures: nil, metrics: d.metrics,
                maximumBodyBytes: d.configuration.maxBodyBytes, clock: d.clock
            )
        case .passwordOrDevice(let options):
            return PasswordLoginMiddleware(
                authenticator: login, route: options, signatures: d.requestVerifier, metrics: d.metrics,
                maximumBodyBytes: d.configuration.maxBodyBytes, clock: d.clock
            )
        default:
            return nil
        }
    }
}
