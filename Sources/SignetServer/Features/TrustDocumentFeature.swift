// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import SignetMiddleware

/// The signed trust document, served at `/signet/v1/trust` to apps.
struct TrustDocumentFeature: GatewayFeature {
    let route: TrustDocumentRoute

    func addRoutes(to router: Router<SignetRequestContext>, listener: FeatureListener) {
        guard listener.surfaces.contains(.client) else { return }
        route.add(to: router)
    }

    var keys: [GatewayKeyInventory.Entry] {
        [.init(role: "trust document", name: "version \(route.version)", algorithm: "JWS", notAfter: route.expires)]
    }
}
