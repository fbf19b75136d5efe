// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SwiftASN1
import X509
import SignetMiddleware

/// The signed trust document, served at `/signet/v1/trust` to apps.
struct TrustDocumentFeature: GatewayFeature {
    let route: TrustDocumentRoute

    /// `nil` without `trustDocument`. The document is checked against what the gateway serves now:
    /// its TLS chain and public host.
    init?(_ context: FeatureContext) throws {
        let (dependencies, configuration, tls) = (context.dependencies, context.configuration, context.dependencies.tls)
        guard let trust = configuration.trustDocument else { return nil }
        route = try TrustDocumentRoute(
            file: trust.file,
            servedChain: try tls?.chain.map { try $0.serializeAsPEM().derBytes },
            host: configuration.publicAuthority.map { String($0.split(separator: ":").first ?? Substring($0)) },
            now: dependencies.clock()
        )
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
