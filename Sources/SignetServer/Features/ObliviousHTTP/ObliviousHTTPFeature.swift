// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetMiddleware

/// Oblivious HTTP (RFC 9458) sent straight to the gateway: `GET /signet/v1/ohttp-keys` and
/// `POST /signet/v1/ohttp`, decapsulated in front of the client listener's router.
struct ObliviousHTTPFeature: GatewayFeature {
    let settings: GatewayConfiguration.OHTTP
    let keySet: OHTTPKeySet
    let dependencies: FeatureDependencies

    init?(_ context: FeatureContext) throws {
        let dependencies = context.dependencies
        guard let settings = dependencies.configuration.ohttp else { return nil }
        self.settings = settings
        self.keySet = try OHTTPKeySet.loadOrCreate(settings) { path in
            context.mayCreate(path) { running in running.ohttp?.keys.map(\.keyFile) ?? [] }
        }
        self.dependencies = dependencies
    }

    static let endpoints = ["/signet/v1/ohttp-keys", "/signet/v1/ohttp"]

    static func validate(_ configuration: GatewayConfiguration) throws { try configuration.ohttp?.validate() }

    static func checkFiles(_ configuration: GatewayConfiguration, _ files: inout FileChecks) {
        for key in configuration.ohttp?.keys ?? [] { files.mayCreate(key.keyFile, "the OHTTP key") }
    }

    /// `inner` behind decapsulation: the apps' listener's whole responder, so an encapsulated
    /// request goes through everything a plain one does. (A concrete type, not a closure: every
    /// request passes through it.)
    func wrapping<Inner: HTTPResponder>(_ inner: Inner) -> ObliviousGatewayResponder<Inner> where Inner.Context == SignetRequestContext {
        let d = dependencies
        return ObliviousGatewayResponder(
            inner: inner,
            keys: keySet,
            replay: d.store,
            replayWindow: TimeInterval(settings.replayWindow),
            failures: SharedSourceLimiter("ohttp-failures", limit: settings.failuresPerMinute, store: d.store),
            requests: SharedSourceLimiter("ohttp-requests", limit: settings.requestsPerMinute, store: d.store),
            maximumRequestBytes: d.configuration.maxBodyBytes,
            maximumResponseBytes: SignetGateway.maximumBufferedResponseBytes,
            debug: d.configuration.debug,
            metrics: d.metrics,
            clock: d.clock
        )
    }

    var keys: [GatewayKeyInventory.Entry] {
        keySet.entries.map { entry in
            let configuration = entry.key.configuration
            return .init(
                role: "Oblivious HTTP",
                name: "key id \(configuration.keyID)",
                algorithm: configuration.kem == OHTTPAlgorithms.kemX25519 ? "X25519" : "P-256",
                notBefore: entry.notBefore,
                notAfter: entry.notAfter
            )
        }
    }
}
