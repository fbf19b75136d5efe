// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SwiftASN1
import X509
import SignetMiddleware

/// The signed trust document, served at `/signet/v1/trust` to apps.
struct TrustDocumentFeature: GatewayFeature {
    let route: TrustDocumentRoute

    /// `nil` without `trustDocument`. The document is checked against what the gateway serves now:
    /// its TLS chain and public host; at a reload, also against the one being served, since apps
    /// take only a higher version (`trust_version_rollback`): a lower one, or the same version with
    /// other content, would never reach the apps that took the one served.
    init?(_ context: FeatureContext) throws {
        let (dependencies, configuration, tls) = (context.dependencies, context.configuration, context.dependencies.tls)
        guard let trust = configuration.trustDocument else { return nil }
        route = try TrustDocumentRoute(
            file: trust.file,
            servedChain: try tls?.chain.map { try $0.serializeAsPEM().derBytes },
            host: configuration.publicAuthority.map { String($0.split(separator: ":").first ?? Substring($0)) },
            now: dependencies.clock()
        )
        if let served = context.previous(Self.self)?.route,
            route.version < served.version || (route.version == served.version && route.content != served.content)
        {
            throw ConfigurationError.invalid(
                "trustDocument.file",
                "trustDocument.file: \(trust.file) is version \(route.version) and the gateway serves version \(served.version)"
                    + (route.version == served.version ? " with other content" : "")
                    + ": apps take only a higher version; sign the change as version \(served.version + 1)"
            )
        }
    }

    static let endpoints = ["/signet/v1/trust"]

    static func checkFiles(_ configuration: GatewayConfiguration, _ files: inout FileChecks) {
        if let trustDocument = configuration.trustDocument { files.mustRead(trustDocument.file, "the trust document") }
    }

    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        guard listener.surfaces.contains(.client) else { return }
        route.add(to: router)
    }

    var keys: [GatewayKeyInventory.Entry] {
        [.init(role: "trust document", name: "version \(route.version)", algorithm: "JWS", notAfter: route.expires)]
    }
}
