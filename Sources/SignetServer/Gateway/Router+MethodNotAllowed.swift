// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import SignetMiddleware

extension Router {
    /// The methods a path of Signet's own may not take: those the gateway serves anywhere (others,
    /// `TRACE` among them, are `404` on every path, as on proxied routes).
    static var refusableMethods: [HTTPRequest.Method] { SignetGateway.proxiedMethods }

    /// Makes every path this router serves under `segments` (Signet's own) answer the methods it
    /// does not take with `405 method_not_allowed` and `Allow`, rather than `404`: a client that
    /// GETs `/signet/v1/challenges` learns to POST it. Read from the routes the features added, so
    /// a feature that is not configured has no path here to refuse methods on. `HEAD` goes with
    /// `GET` (the router is built with `autoGenerateHeadEndpoints`). Call once every route is added.
    func refuseOtherMethods(under segments: Set<String>) {
        var served: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in routes {
            let text = route.path.description
            guard let first = text.split(separator: "/").first, segments.contains(String(first).lowercased()) else { continue }
            served[text, default: (route.path, [])].methods.insert(route.method)
        }
        for (_, entry) in served {
            var taken = entry.methods
            if taken.contains(.get) { taken.insert(.head) }
            let refusal = MethodNotAllowed(allowed: Self.refusableMethods.filter(taken.contains))
            for method in Self.refusableMethods where !taken.contains(method) {
                on(entry.path, method: method) { _, _ -> Response in throw refusal }
            }
        }
    }
}
